#!/usr/bin/env bash
# ci/coverage.sh - line and branch coverage of the quick suites, per folder
# and per file, and the work list of the lines no quick test reaches
# (docs/coverage.md).
#
# It configures a build of its own (build-cov/ by default) with gcc's
# --coverage at -Og, builds it, clears the counters, runs `ctest -L quick`
# there as CI does (XO_REQUIRE_OPENCL=1: the OpenCL suites may not skip),
# then reads every object's counters with gcov (its JSON output) and adds
# them up (ci/coverage.py):
#
#   OUT/coverage.tsv        folder, lines, lines_hit, branches, branches_hit
#                           (core kernels reference cl model perfdb cli include, then all)
#   OUT/coverage-files.tsv  the same per source file, with its to-do count
#   OUT/todo.txt            the lines no quick test reaches in model/, perfdb/
#                           and the kernels' drivers (cl/*.c, kernels/*.c
#                           without '__'), by file and function, as line ranges;
#                           the code of ci/coverage-blind.txt apart, with its reason
#   OUT/coverage.txt        the per-folder table as the terminal shows it
#
# -Og: gcc's level for debugging keeps each statement on its own line and
# inlines nothing, so a count belongs to the line that was written; -O2
# moves and merges code and folds branches away, -O0 makes the numeric
# suites slower (docs/coverage.md gives the times measured). The reference
# keeps its own -O2 without fast-math or contraction (reference/CMakeLists.txt),
# so it is checked as it always is. The OpenCL kernels (.cl files) run inside
# PoCL, compiled at run time: gcov cannot see them; cl/ is the host code.
# The build has no -Werror: -Og's flow analysis warns where -O2's does not
# (maybe-uninitialized), and CI's own build already holds the code to -Werror.
#
# Usage: ci/coverage.sh [--build DIR] [--out DIR] [--db FILE] [-j N]
#        ci/coverage.sh --collect-only --build DIR [--src DIR] [--out DIR] [--db FILE]
#   --build DIR     the coverage build (default build-cov under the repository)
#   --out DIR       where the tables go (default out/coverage)
#   --db FILE       also store the per-folder figures as rows of table coverage
#                   (date, sha, folder) in that crossover perf store (SQLite;
#                   an existing store, never any other file); `xo perf report` draws them
#   -j N            build and ctest parallelism (XO_JOBS, else nproc)
#   --blind FILE    the list of code gcov cannot count (default ci/coverage-blind.txt):
#                   todo.txt lists it apart, with the reason, off the to-do counts
#   --collect-only  read the counters already in --build; configure, build and
#                   run nothing (--src: the source tree the build compiled,
#                   default the repository)
# Exit: 0 done and every quick test passed; 1 a quick test failed (the
# tables are still written); 2 bad usage, a --db that is not a crossover
# store or cannot be written (read-only, locked: XO_COVERAGE_DB_WAIT seconds,
# default 10, are waited for the lock; a table coverage of another shape),
# an --out that is not a directory, a build that fails, no counters to read,
# or tables or rows that cannot be written at the end; one line on stderr.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # XO_ROOT, XO_JOBS

die() {
    echo "xo: coverage: $*" >&2
    exit 2
}

build=$XO_ROOT/build-cov out=$XO_ROOT/out/coverage db='' src='' blind='' collect_only=0
jobs=$XO_JOBS
while [ $# -gt 0 ]; do
    case $1 in
    --build | --out | --db | --src | --blind)
        [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value"
        case $1 in
        --build) build=$2 ;;
        --out) out=$2 ;;
        --db) db=$2 ;;
        --src) src=$2 ;;
        --blind) blind=$2 ;;
        esac
        shift
        ;;
    -j)
        [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*$ ]] || die "-j needs a count >= 1"
        jobs=$2
        shift
        ;;
    -j[1-9]*)
        [[ ${1#-j} =~ ^[1-9][0-9]*$ ]] || die "bad option '$1'"
        jobs=${1#-j}
        ;;
    --collect-only) collect_only=1 ;;
    -h | --help)
        sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done
[ -z "$src" ] || [ $collect_only = 1 ] || die "--src goes with --collect-only"
src=${src:-$XO_ROOT}
[ -d "$src" ] || die "--src $src: no such directory"
[ ! -e "$out" ] || [ -d "$out" ] || die "--out $out: exists and is not a directory"
command -v python3 >/dev/null || die "python3 is needed (Debian package python3)"
command -v gcov >/dev/null || die "gcov is needed (it comes with gcc)"
AGG=(python3 "$XO_ROOT/ci/coverage.py")
# a store that will be refused (not a crossover store, read-only, locked, a
# table coverage of another shape) is refused before minutes of build and test
[ -z "$db" ] || "${AGG[@]}" --check-db "$db" || exit 2
# and so is an --out that cannot be made or written
mkdir -p "$out" 2>/dev/null || die "--out $out: cannot create the directory"
[ -w "$out" ] || die "--out $out: not writable"

t_all=$(date +%s)
test_rc=0
if [ $collect_only = 0 ]; then
    t0=$(date +%s)
    mkdir -p "$build" || die "--build $build: cannot create the directory"
    echo "coverage: building $build (gcc --coverage -Og)"
    if ! { cmake -S "$XO_ROOT" -B "$build" -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_C_COMPILER=gcc -DCMAKE_C_FLAGS_DEBUG="-Og -g --coverage" \
        -DCMAKE_EXE_LINKER_FLAGS=--coverage -DCMAKE_SHARED_LINKER_FLAGS=--coverage &&
        cmake --build "$build" -j"$jobs"; } >"$build/coverage-build.log" 2>&1; then
        tail -n 40 "$build/coverage-build.log"
        die "the coverage build failed (see $build/coverage-build.log)"
    fi
    t1=$(date +%s)
    echo "coverage: built in $((t1 - t0))s; running ctest -L quick"
    # the counters of earlier runs (and of the build's own checks) out first
    find "$build" -name '*.gcda' -delete
    XO_REQUIRE_OPENCL=${XO_REQUIRE_OPENCL:-1} ctest --test-dir "$build" -L quick -j"$jobs" \
        --timeout 600 --output-on-failure >"$build/coverage-test.log" 2>&1 || test_rc=1
    grep -E 'tests passed|tests failed' "$build/coverage-test.log" | tail -n 1
    [ $test_rc = 0 ] || grep -A200 'The following tests FAILED' "$build/coverage-test.log"
    echo "coverage: quick suites ran in $(($(date +%s) - t1))s"
fi

sha=$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
dirty=0
[ "$sha" = unknown ] ||
    [ -z "$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ] || dirty=1
t0=$(date +%s)
"${AGG[@]}" --build "$build" --src "$src" --out "$out" -j "$jobs" --sha "$sha" --dirty $dirty \
    --date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" ${db:+--db "$db"} ${blind:+--blind "$blind"} || exit 2
echo "coverage: collected in $(($(date +%s) - t0))s; total $(($(date +%s) - t_all))s"
exit $test_rc
