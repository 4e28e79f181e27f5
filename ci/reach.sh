#!/usr/bin/env bash
# ci/reach.sh - the reach map: which product functions each ctest test
# executes, per pass (docs/mutation.md, "Selection by reach").
#
# Builds the tree SRC as CI does (gcc, RelWithDebInfo) plus
# -finstrument-functions (every function's entry calls the runtime, an inlined
# function's too) and the runtime ci/reach_rt.c linked into every executable; runs every test of every PASS on its own (ctest -R
# '^NAME$', its fixtures with it), with XO_REACH_DIR naming a directory of
# that test, which the processes the test starts inherit; then symbolizes the
# recorded function addresses once per binary (llvm-symbolizer) into
# FILE<TAB>FUNCTION of the product folders (core kernels reference cl model
# perfdb cli include, headers and .inc files included). Writes in MAP:
#   tests.tsv   PASS TEST SECONDS STATUS (ok, or failed: such a test's reach
#               is not trusted, ci/reach.py selects it for every mutant)
#   reach.tsv   PASS TEST FILE FUNCTION, one row per function a test reaches
#   funcs.tsv   FILE FUNCTION of every function defined in the map's binaries
#   done        the tree's key (--key) and the tables' row counts, written
#               last: the map is complete (ci/reach.py check)
# OpenCL kernels (.cl) run inside the OpenCL platform and are not seen.
#
# Usage: ci/reach.sh --src DIR --map DIR [--key KEY] [--build DIR] [-j N] PASS...
#   PASS is ci/mutate.sh's NAME:ENV:CTEST-ARGS (ENV one VAR=VALUE or empty).
#   --build is the instrumented build directory (default MAP/build; the
#   runtime's object goes beside it): one kept apart from the map lets the
#   next map of a later tree build incrementally while this one stays whole.
# Environment: XO_REACH_TIMEOUT per-test ctest timeout (default 300 s; the
#   races label's tests get three times that).
# Exit: 0 map written; 2 bad usage or the build failed.
set -u -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() {
    echo "xo: reach: $*" >&2
    exit 2
}
src= map= key=- B= jobs=$(nproc 2>/dev/null || echo 2) passes=()
while [ $# -gt 0 ]; do
    case $1 in
    --src) [ $# -ge 2 ] || die "--src needs a directory"; src=$2; shift ;;
    --map) [ $# -ge 2 ] || die "--map needs a directory"; map=$2; shift ;;
    --key) [ $# -ge 2 ] && [ -n "$2" ] || die "--key needs the tree's key"; key=$2; shift ;;
    --build) [ $# -ge 2 ] && [ -n "$2" ] || die "--build needs a directory"; B=$2; shift ;;
    -j) [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*$ ]] || die "-j needs a count >= 1"; jobs=$2; shift ;;
    -j[1-9]*) jobs=${1#-j} ;;
    -*) die "unknown option '$1'" ;;
    *) passes+=("$1") ;;
    esac
    shift
done
# a map being rebuilt is not complete from here on, whatever stops this
[ -z "$map" ] || rm -f "$map/done"
[ -n "$src" ] && [ -f "$src/CMakeLists.txt" ] || die "--src must be a source tree"
[ -n "$map" ] || die "--map needs a directory"
[ ${#passes[@]} -gt 0 ] || die "no pass given"
timeout=${XO_REACH_TIMEOUT:-300}
[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "XO_REACH_TIMEOUT='$timeout' must be seconds >= 1"
command -v llvm-symbolizer >/dev/null && command -v llvm-nm >/dev/null ||
    die "the reach map needs llvm-symbolizer and llvm-nm (Debian package llvm)"
src=$(cd "$src" && pwd)
mkdir -p "$map" || die "$map: cannot create"
map=$(cd "$map" && pwd)
rm -f "$map/done"
B=${B:-$map/build}
mkdir -p "$B" || die "$B: cannot create"
B=$(cd "$B" && pwd)
rt=$(dirname "$B")/reach_rt.o
t0=$(date +%s)
cc -O2 -c -o "$rt.new" "$here/reach_rt.c" || die "cannot compile ci/reach_rt.c"
if ! cmp -s "$rt.new" "$rt"; then
    # the runtime is no dependency CMake knows: relink every executable
    mv "$rt.new" "$rt"
    [ ! -d "$B" ] || find "$B" -type f -perm -u+x ! -name '*.so*' -print0 |
        while IFS= read -r -d '' f; do
            [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" != '177ELF' ] || rm -f "$f"
        done
fi
rm -f "$rt.new"
# a build directory of another source tree (a map kept from another
# checkout) cannot be reused: its objects describe that tree
if [ -f "$B/CMakeCache.txt" ] &&
    [ "$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$B/CMakeCache.txt")" != "$src" ]; then
    rm -rf "$B"
fi
# No compiler cache: the map names functions by the source paths in the
# objects' debug information, and a cached object (ccache with a base dir
# and no hashed working dir, as ci/lib.sh sets it up) carries the paths of
# whichever tree compiled it first, so the map would name no function of
# this one.
export CCACHE_DISABLE=1
if [ ! -f "$B/CMakeCache.txt" ]; then
    cmake -S "$src" -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_FLAGS="-finstrument-functions" \
        -DCMAKE_EXE_LINKER_FLAGS="$rt" \
        -DCMAKE_SHARED_LINKER_FLAGS="$rt" >"$map/build.log" 2>&1 ||
        die "cmake failed (see $map/build.log)"
fi
cmake --build "$B" -j"$jobs" >>"$map/build.log" 2>&1 || die "the build failed (see $map/build.log)"
echo "reach: built in $(($(date +%s) - t0))s"

# one_test PASS ENV TEST: runs TEST alone and prints its tests.tsv row
one_test() {
    local pass=$1 env=$2 t=$3 dir re to=$timeout s0 rc st
    dir=$map/pcs/$pass/$t
    rm -rf "$dir" && mkdir -p "$dir"
    re=$(printf '%s' "$t" | sed 's/[][\.^$*+?(){}|]/\\&/g')
    [ "$pass" = races ] && to=$((timeout * 3))
    s0=$(date +%s.%N)
    # shellcheck disable=SC2086 # env is one word or none
    env $env XO_REACH_DIR="$dir" ctest --test-dir "$B" -R "^$re\$" --timeout "$to" \
        >"$dir.log" 2>&1
    rc=$?
    st=ok
    { [ $rc -eq 0 ] && grep -q 'tests passed' "$dir.log"; } || st=failed
    printf '%s\t%s\t%.2f\t%s\n' "$pass" "$t" "$(echo "$(date +%s.%N) - $s0" | bc)" "$st"
}

: >"$map/tests.tsv"
for p in "${passes[@]}"; do
    name=${p%%:*} rest=${p#*:} env=${rest%%:*} args=${rest#*:}
    t1=$(date +%s)
    # shellcheck disable=SC2086 # args are words
    mapfile -t tests < <(env $env ctest --test-dir "$B" -N $args | sed -n 's/^ *Test *#[0-9]*: //p')
    n=0
    for t in "${tests[@]}"; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
        one_test "$name" "$env" "$t" >>"$map/tests.tsv" &
        n=$((n + 1))
    done
    wait
    # a test that failed beside another may have met it on a shared lock
    # (RESOURCE_LOCK, RUN_SERIAL are lost when each runs alone): once more,
    # one at a time
    mapfile -t again < <(awk -F'\t' -v p="$name" '$1 == p && $4 != "ok" { print $2 }' "$map/tests.tsv")
    if [ ${#again[@]} -gt 0 ]; then
        awk -F'\t' -v p="$name" '!($1 == p && $4 != "ok")' "$map/tests.tsv" >"$map/tests.tmp"
        for t in "${again[@]}"; do
            one_test "$name" "$env" "$t" >>"$map/tests.tmp"
        done
        mv "$map/tests.tmp" "$map/tests.tsv"
    fi
    echo "reach: pass $name: $n tests in $(($(date +%s) - t1))s ($(awk -F'\t' -v p="$name" \
        '$1 == p && $4 != "ok"' "$map/tests.tsv" | wc -l) failed, ${#again[@]} run again alone)"
done
t1=$(date +%s)
python3 "$here/reach.py" build --map "$map" --src "$src" --key "$key" || die "cannot symbolize"
echo "reach: symbolized in $(($(date +%s) - t1))s; map in $map ($(($(date +%s) - t0))s in all)"
