#!/usr/bin/env bash
# suites/perf_versions.sh MODE ... - the code versions of perfdb/versions.cmake
# (docs/perf.md "Kernel versions"): a change to each kind of file that builds
# a unit's code changes exactly that unit's version, and a change to a file
# that builds none (docs, tests) changes none.
#
#   tiny SCRIPT   a small CMake project in a temporary directory, built for
#                 real, shaped like xo (a core, backends "cpu", "cl" and "ref";
#                 an .inc, a private header, a shared ops.def, a .cl embedded
#                 at build time, a per-file compile flag): each case edits one
#                 file, rebuilds (the POST_BUILD step writes the manifest) and
#                 compares the units' versions. A second clone of the same
#                 tree gets the same versions (builds in temporary clones are
#                 what bisect and continuous compare).
#   real XO SRC   xo's own build: the manifest beside XO names every unit;
#                 `perf record --list --json` gives one version per backend
#                 for ops, another for models, and "unknown" for a copy of xo
#                 without its manifest or with a unit's version that is not
#                 exactly 16 hex digits; the build's own dependency files,
#                 moved onto a copy of the tree, give the same versions, and
#                 touching kernels/cpu_kernels.inc changes "cpu" only,
#                 perfdb/runner.c "runner" only, ops.def every unit that read
#                 it, perfdb/report.c, docs and tests nothing.
# Exit 0 when every case holds, 1 with the case that failed.
set -u -o pipefail
mode=${1:?usage: perf_versions.sh tiny SCRIPT | real XO SRC}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xo-versions-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0

# the units whose versions differ between manifests $1 and $2, space-separated
changed() {
    awk -F'\t' 'FNR == 1 { f++ } /^#/ { next } f == 1 { a[$1] = $2 } f == 2 && a[$1] != $2 { printf "%s%s", sep, $1; sep = " " }' "$1" "$2"
}

# case NAME WANT OLD NEW: WANT the units that must change, "" for none
check() {
    local got
    got=$(changed "$3" "$4")
    if [ "$got" = "$2" ]; then
        printf 'ok    %-44s changed: %s\n' "$1" "${got:-(none)}"
    else
        printf 'FAIL  %-44s changed: %s, want: %s\n' "$1" "${got:-(none)}" "${2:-(none)}"
        fails=$((fails + 1))
    fi
    if grep -q $'\tunknown$' "$4"; then
        echo "FAIL  $1: a unit is unknown:"
        cat "$4" "$4.why"
        fails=$((fails + 1))
    fi
}

tiny() {
    local script=$1 s=$tmp/src b=$tmp/build
    mkdir -p "$s"/{include,core,cpu,cl,ref,docs,tests}
    cat >"$s/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.18)
project(tiny C)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
include_directories(include)
add_library(t_core OBJECT core/core.c)
add_library(t_cpu OBJECT cpu/cpu.c)
set_source_files_properties(cpu/cpu.c PROPERTIES COMPILE_OPTIONS "-O1")
add_custom_command(OUTPUT \${CMAKE_BINARY_DIR}/cl_src.c
  COMMAND \${CMAKE_COMMAND} -DIN=\${CMAKE_SOURCE_DIR}/cl/k.cl -DOUT=\${CMAKE_BINARY_DIR}/cl_src.c
          -P \${CMAKE_SOURCE_DIR}/embed.cmake
  DEPENDS cl/k.cl embed.cmake)
add_library(t_cl OBJECT cl/cl.c \${CMAKE_BINARY_DIR}/cl_src.c)
add_library(t_ref OBJECT ref/ref.c)
add_executable(app app.c)
target_link_libraries(app PRIVATE t_core t_cpu t_cl t_ref)
add_executable(unit_test tests/t.c)
add_custom_command(TARGET app POST_BUILD
  COMMAND \${CMAKE_COMMAND} -DBUILD_DIR=\${PROJECT_BINARY_DIR} -DSOURCE_DIR=\${PROJECT_SOURCE_DIR}
          -DOUT=\$<TARGET_FILE_DIR:app>/app.versions
          "-DCOMPILER=\${CMAKE_C_COMPILER_ID} \${CMAKE_C_COMPILER_VERSION}"
          "-DUNITS=core=t_core|cpu=t_cpu|cl=t_cl|ref=t_ref" -P $script
  VERBATIM)
EOF
    cat >"$s/embed.cmake" <<'EOF'
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
file(WRITE ${OUT} "const char tiny_cl[] = {${hex}0};\n")
EOF
    printf '#define OPS X(relu) X(conv)\n' >"$s/include/ops.def"
    printf '#include "ops.def"\nint tiny_core(void);\n' >"$s/include/api.h"
    printf '#include "api.h"\nint tiny_core(void) { return 1; }\n' >"$s/core/core.c"
    printf 'static int relu(int x) { return x > 0 ? x : 0; }\n' >"$s/cpu/k.inc"
    printf 'int tiny_cpu(int);\n' >"$s/cpu/cpu.h"
    printf '#include "api.h"\n#include "cpu.h"\n#include "k.inc"\nint tiny_cpu(int x) { return relu(x); }\n' >"$s/cpu/cpu.c"
    printf '__kernel void relu(__global float *x) { x[0] = fmax(x[0], 0.0f); }\n' >"$s/cl/k.cl"
    printf '#include "api.h"\nextern const char tiny_cl[];\nint tiny_clc(void);\nint tiny_clc(void) { return tiny_cl[0]; }\n' >"$s/cl/cl.c"
    printf '#include "api.h"\nint tiny_ref(void);\nint tiny_ref(void) { return 2; }\n' >"$s/ref/ref.c"
    printf 'int tiny_cpu(int);\nint main(void) { return tiny_cpu(0); }\n' >"$s/app.c"
    printf 'int main(void) { return 0; }\n' >"$s/tests/t.c"
    printf '# tiny\n' >"$s/docs/notes.md"
    cp -r "$s" "$tmp/clone"
    build() { cmake --build "$b" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }; }
    cmake -S "$s" -B "$b" >"$tmp/conf.log" 2>&1 || { cat "$tmp/conf.log"; exit 1; }
    build
    local m=$b/app.versions n=0
    [ -s "$m" ] || { echo "FAIL  no manifest after the build"; exit 1; }
    cp "$m" "$tmp/m0"
    # CASE WANT FILE EDIT: edit FILE (a sed expression, or "append TEXT")
    step() {
        local name=$1 want=$2 file=$3 edit=$4
        n=$((n + 1))
        cp "$m" "$tmp/before"
        case $edit in
        append\ *) printf '%s\n' "${edit#append }" >>"$s/$file" ;;
        *) sed -i "$edit" "$s/$file" ;;
        esac
        build
        # recomputed after the build too: a file no unit read must not count
        # even where the step runs (an untouched app is not relinked)
        cmake -DBUILD_DIR="$b" -DSOURCE_DIR="$s" -DOUT="$tmp/again" \
            "-DCOMPILER=$(sed -n 's/^# compiler //p' "$m")" \
            "-DUNITS=$(sed -n 's/^# units //p' "$m")" -P "$script"
        check "$name (after the build)" "$want" "$tmp/before" "$m"
        check "$name (recomputed)" "$want" "$tmp/before" "$tmp/again"
    }
    step ".inc: cpu/k.inc" "cpu" cpu/k.inc 's/x : 0/x : -0/'
    step ".h: cpu/cpu.h" "cpu" cpu/cpu.h 'append int tiny_cpu2(int);'
    step ".c: cl/cl.c" "cl" cl/cl.c 's/tiny_cl\[0\]/tiny_cl[1]/'
    step ".cl: cl/k.cl (embedded)" "cl" cl/k.cl 's/0.0f/0.5f/'
    step "ops.def: include/ops.def" "core cpu cl ref" include/ops.def 's/X(conv)/X(conv) X(pool)/'
    step "flag: -O1 to -O2 on cpu/cpu.c in CMake" "cpu" CMakeLists.txt 's/"-O1"/"-O2"/'
    step "docs: docs/notes.md" "" docs/notes.md 'append more words'
    step "tests: tests/t.c" "" tests/t.c 's/return 0/return 0 + 0/'
    # a second clone of the original tree, built elsewhere: the same versions
    cmake -S "$tmp/clone" -B "$tmp/clone-build" >"$tmp/conf.log" 2>&1 &&
        cmake --build "$tmp/clone-build" >"$tmp/build.log" 2>&1 ||
        { cat "$tmp/conf.log" "$tmp/build.log"; exit 1; }
    check "another clone of the first tree: same versions" "" "$tmp/m0" "$tmp/clone-build/app.versions"
    # a dependency file that cannot be read: the unit is unknown, never a hash
    rm -f "$b/CMakeFiles/t_cpu.dir/cpu/cpu.c.o.d"
    cmake -DBUILD_DIR="$b" -DSOURCE_DIR="$s" -DOUT="$tmp/nodep" \
        "-DCOMPILER=x" "-DUNITS=cpu=t_cpu|ref=t_ref" -P "$script"
    if grep -q $'^cpu\tunknown$' "$tmp/nodep" && grep -q $'^ref\t[0-9a-f]\{16\}$' "$tmp/nodep"; then
        echo "ok    a missing dependency file makes its unit unknown"
    else
        echo "FAIL  a missing dependency file:"; cat "$tmp/nodep"; fails=$((fails + 1))
    fi
}

# the version of every benchmark of `perf record --list --json`, "name version"
list_versions() {
    local xo=$1 d args=()
    shift
    for d in "$@"; do args+=(--device "$d"); done
    "$xo" perf record --list --json --quick "${args[@]}" 2>"$tmp/list.err" |
        python3 -c 'import json, sys
for b in json.load(sys.stdin): print(b["name"], b["version"])' || { cat "$tmp/list.err"; exit 1; }
}

real() {
    local xo=$1 src=$2 m bdir units
    m=$(dirname "$xo")/xo.versions
    [ -s "$m" ] || { echo "FAIL  no $m beside $xo"; exit 1; }
    units=$(sed -n 's/^# units //p' "$m")
    bdir=$(cd "$(dirname "$xo")/.." && pwd)
    for u in core runner ref cpu model; do
        grep -q "^$u"$'\t''[0-9a-f]\{16\}$' "$m" ||
            { echo "FAIL  unit $u has no version in $m:"; cat "$m" "$m.why"; exit 1; }
    done
    echo "ok    $m names core, runner, ref, cpu and model"
    # one version per (kind, backend); all known; backends and kinds apart
    local devs=(ref cpu)
    grep -q $'^cl\t[0-9a-f]\{16\}$' "$m" && devs+=(cl)
    list_versions "$xo" "${devs[@]}" >"$tmp/list" || exit 1
    python3 - "$tmp/list" "${#devs[@]}" <<'PY' || fails=$((fails + 1))
import sys
seen = {}
for line in open(sys.argv[1]):
    name, v = line.split()
    key = (name.split("/")[0], name.rsplit("/", 1)[1])
    seen.setdefault(key, set()).add(v)
bad = [k for k, v in seen.items() if len(v) != 1 or "unknown" in v]
vals = [next(iter(v)) for v in seen.values()]
if bad or len(set(vals)) != len(vals) or len(seen) != 2 * int(sys.argv[2]):
    print("FAIL  versions by (kind, device):", seen)
    sys.exit(1)
print("ok    one known version per kind and backend, all different:",
      ", ".join("%s/%s" % k for k in sorted(seen)))
PY
    # xo without its manifest: every version unknown
    cp "$xo" "$tmp/xo"
    list_versions "$tmp/xo" "${devs[@]}" >"$tmp/list2" || exit 1
    if [ -s "$tmp/list2" ] && ! grep -qv ' unknown$' "$tmp/list2"; then
        echo "ok    an xo without xo.versions: every version unknown"
    else
        echo "FAIL  an xo without xo.versions:"; head -3 "$tmp/list2"; fails=$((fails + 1))
    fi
    # a unit's version is taken only when it is exactly 16 hex digits: one
    # non-hex anywhere, one digit short or one too many makes every ref
    # benchmark unknown, while cpu's stay known
    local v bad_v=0
    for v in 0123456789abcdeg g123456789abcdef 01234567x9abcdef 0123456789abcde \
        0123456789abcdef0 zzzzzzzzzzzzzzzz; do
        sed "s/^ref"$'\t'".*/ref"$'\t'"$v/" "$m" >"$tmp/xo.versions"
        list_versions "$tmp/xo" ref cpu >"$tmp/list3" || exit 1
        if grep -q '/ref [0-9a-f]\{16\}$' "$tmp/list3" || ! grep -q '/ref unknown$' "$tmp/list3" ||
            ! grep -q '/cpu [0-9a-f]\{16\}$' "$tmp/list3"; then
            echo "FAIL  ref's version '$v' in xo.versions:"; grep -m 2 '/ref ' "$tmp/list3"
            fails=$((fails + 1)) bad_v=1
        fi
    done
    rm -f "$tmp/xo.versions"
    [ $bad_v = 0 ] && echo "ok    a version that is not 16 hex digits is unknown"
    # the build's dependency files moved onto a copy of the tree, with the
    # files the build generates into it (the embedded .cl text, the kernel list)
    # The build keeps its place beside the sources in the copy: a compiler
    # cache with a base directory (ci/lib.sh's ccache) writes the dependency
    # files' paths relative to the object's folder ("../../core/x.c").
    local cb=$tmp/build rel
    rel=$(realpath -m --relative-to="$src" "$bdir")
    case $rel in ..* | /*) ;; *) cb=$tmp/src/$rel ;; esac
    mkdir -p "$tmp/src" "$cb"
    for d in include core kernels cl reference model models perfdb cli docs suites; do
        [ -d "$src/$d" ] && cp -r "$src/$d" "$tmp/src/"
    done
    sed -e "s|$bdir/|$cb/|g" -e "s|$src/|$tmp/src/|g" \
        "$bdir/compile_commands.json" >"$cb/compile_commands.json"
    (cd "$bdir" && find . -name '*.o.d' -path '*CMakeFiles/xo_*' -print0 &&
        find . \( -name 'cl_sources.c' -o -name 'cl_kernels.h' \) -print0) |
        while IFS= read -r -d '' f; do
            mkdir -p "$cb/$(dirname "$f")"
            sed -e "s|$bdir/|$cb/|g" -e "s|$src/|$tmp/src/|g" "$bdir/$f" >"$cb/$f"
        done
    local comp n=0
    comp=$(sed -n 's/^# compiler //p' "$m")
    ver() { cmake -DBUILD_DIR="$cb" -DSOURCE_DIR="$tmp/src" -DOUT="$1" \
        "-DCOMPILER=$comp" "-DUNITS=$units" -P "$src/perfdb/versions.cmake"; }
    ver "$tmp/r0"
    check "the same build read from a copy of the tree" "" "$m" "$tmp/r0"
    touchit() {
        local name=$1 want=$2 file=$3
        n=$((n + 1))
        printf '\n/* touched */\n' >>"$tmp/src/$file"
        ver "$tmp/r$n"
        check "$name" "$want" "$tmp/r$((n - 1))" "$tmp/r$n"
    }
    touchit ".inc: kernels/cpu_kernels.inc" "cpu" kernels/cpu_kernels.inc
    touchit ".inc: kernels/cpu_rnn.inc" "cpu" kernels/cpu_rnn.inc
    touchit ".h: kernels/cpu.h" "cpu" kernels/cpu.h
    touchit ".c: reference/ref_act.c" "ref" reference/ref_act.c
    touchit ".c: model/spec.c" "model" model/spec.c
    touchit ".c: perfdb/runner.c (times every benchmark)" "runner" perfdb/runner.c
    touchit ".c: perfdb/report.c (builds no benchmark)" "" perfdb/report.c
    touchit "docs: docs/perf.md" "" docs/perf.md
    touchit "tests: suites/test_perf_versions.c" "" suites/test_perf_versions.c
    # ops.def: every unit whose TUs read it (all of them in xo)
    local want
    want=$(grep -E '^[a-z]+'$'\t' "$m" | cut -f1 | tr '\n' ' ' | sed 's/ $//')
    touchit "ops.def: include/xo/ops.def" "$want" include/xo/ops.def
}

case $mode in
tiny) tiny "${2:?tiny SCRIPT}" ;;
real) real "${2:?real XO SRC}" "${3:?real XO SRC}" ;;
*) echo "perf_versions.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac
[ $fails -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
echo "all cases hold"
