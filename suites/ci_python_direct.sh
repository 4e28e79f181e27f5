#!/usr/bin/env bash
# suites/ci_python_direct.sh SRC WORK PYTHON - the suites start Python by the
# interpreter's own path (suites/python/direct.cmake): with a shim first in
# PATH (a script that execs the interpreter, as pyenv's does), a project
# that includes the module finds the interpreter itself, not the shim; a
# Python3_EXECUTABLE given on the command line is kept; and PYTHON, the one
# this build's suites were configured with, is no script.
set -u -o pipefail
src=$1 work=$2 configured=$3
rm -rf "$work" && mkdir -p "$work/shim" || exit 1
# shellcheck source=fail_count.sh
. "$(dirname "${BASH_SOURCE[0]}")/fail_count.sh"

real=$(python3 -S -c 'import sys; print(sys.executable)') || { echo "FAIL: no python3"; exit 1; }
printf '#!/usr/bin/env bash\nexec %q "$@"\n' "$real" >"$work/shim/python3"
chmod +x "$work/shim/python3"
cat >"$work/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.18)
project(python_direct NONE)
include($src/suites/python/direct.cmake)
find_package(Python3 COMPONENTS Interpreter REQUIRED)
file(WRITE \${CMAKE_BINARY_DIR}/python.txt "\${Python3_EXECUTABLE}")
EOF

# configure WORK's project into build dir $1 with the shim first in PATH
# and print the Python it found
configure() {
    local b=$1
    shift
    if ! PATH="$work/shim:$PATH" cmake -S "$work" -B "$work/$b" "$@" >"$work/$b.log" 2>&1; then
        echo "configure $b failed: $(tail -n 3 "$work/$b.log")"
        return 1
    fi
    cat "$work/$b/python.txt"
}

if got=$(configure found); then
    [ "$got" = "$real" ] || fail "with a shim in PATH the suites' Python is $got, not $real"
else
    fail "$got"
fi
if got=$(configure given "-DPython3_EXECUTABLE=$work/shim/python3"); then
    [ "$got" = "$work/shim/python3" ] || fail "a given Python3_EXECUTABLE became $got"
else
    fail "$got"
fi
# this build's own: an executable, not a script ("#!" first)
[ -x "$configured" ] || fail "this build's Python is not executable: $configured"
[ "$(head -c 2 "$configured" 2>/dev/null)" != '#!' ] ||
    fail "this build's suites run Python through a script: $configured"
[ $fails -eq 0 ] || exit 1
echo "ci.python_direct: the interpreter itself ($real), a given one kept"
