#!/usr/bin/env bash
# ci/mutate.sh - the mutation stage: how many realistic bugs does
# what CI runs catch? Each mutant in ci/mutants/*.patch is one small bug (a
# unified diff with a comment header, docs/mutation.md). For each one this
# script, in a scratch copy of the tree (never the checkout itself):
#
#   applies it, builds with -DXO_WERROR=ON (incrementally: one build dir is
#   reused for every mutant and every run), runs what ci/test.sh runs -
#   ctest -L quick, the ISA passes (XO_CPU_ISA=avx2, scalar on the cpu op
#   suites and the model suite), ctest -L races - cheapest tests first and
#   stopping at the first failure, then reverts it.
#
# A mutant is caught when a test fails, missed when everything passes. One
# that does not apply or does not build is an ERROR of the stage (the
# mutant is stale), never "caught". Before the mutants, the unmutated tree
# must pass the same passes (a baseline, skipped when the tree has not
# changed since the last one that passed); its test times order the tests.
#
# Generated mutants (ci/mutgen.py; --from DIR) go through a cheaper path.
# With a reach map of the tree (ci/reach.sh, --reach): only the tests that
# execute the mutated function, in the passes where they do, cheapest first,
# stopping at the first failure, after building only the targets those tests
# run and every target an earlier mutant was built into (so no binary a test
# runs holds another mutant); a mutant no test reaches is a survivor that
# costs no run, one that
# lives through every test that reaches it is a survivor. A map of an older
# commit (none of this tree) chooses the tests the same way, but then a
# mutant no test reached, or one that lives, goes on to its area (below)
# before it is a survivor: a kill is real under any map, a survivor only
# under this tree's. Where the map
# cannot tell (OpenCL kernels, code outside a function, a function not in
# the map, no map): the tests of the mutated file's area first (XO_MUTATE_AREAS, ci/lib.sh),
# stopping at the first failure; only one that lives through them runs on
# every other pass CI runs and, living still, is a survivor. One that does
# not build is stillborn (counted apart, not an ERROR); one that does not
# apply is an ERROR before any shortcut. A mutant is placed by the function
# its line is in on this tree (ci/mutgen.py function), not its header's; a
# map whose done does not name its tree's key and row counts is refused. A
# listed equivalent is not run in a --sample; any other run runs it, and one
# caught is an ERROR. A pass that runs past
# three times its unmutated time (pass_limit) kills the mutant, as a test's
# own timeout does (said so). The unmutated tree must build, and every test
# that caught a mutant must pass on it (checked once at the end;
# --trust-baseline skips that).
#
# Usage: ci/mutate.sh [--all | --sample N [--offset K]] [--list | --check]
#                     [--keep-going] [-j N] [--db FILE] [--out DIR]
#                     [--from DIR [--budget S] [--stop S] [--box-from start|setup]
#                      [--trust-baseline BUILD]] [NAME ...]
#   --all          every mutant (the default)
#   --sample N     N mutants, a window that rotates by the date (or --offset K)
#                  so that successive nights cover the whole list
#   --list         print the selected mutants with class and expectation; run none
#   --check        check every selected mutant's header and that it still applies
#                  to the checkout (git apply --check); build and run nothing
#   --keep-going   after a mutant ERROR, go on with the others (exit still 2)
#   -j N           build and ctest parallelism (XO_JOBS, else nproc)
#   --db FILE      also store the figure in table mutation_runs of that perf
#                  store (an existing crossover store; needs sqlite3)
#   --out DIR      where mutation.txt / mutation.tsv / mutation-history.tsv go
#                  (default out/)
#   --from DIR     the mutants of DIR (ci/mutgen.py's output) instead of
#                  ci/mutants/; results in mutgen.txt, mutgen.tsv and
#                  mutgen-pending.txt of --out, and with --db in table
#                  mutant_results; an empty DIR is nothing to run (exit 0)
#   --budget S     generated mutants: start none after S seconds of the run;
#                  those not run are pending (mutgen-pending.txt)
#   --stop S       generated mutants: a mutant still running S seconds into
#                  the run is stopped and pending too (a hard end for CI)
#   --box-from WHEN  where --budget and --stop count from: start (the run's
#                  start, the default: the nightly's stage must end within
#                  the job's budget) or setup (the end of the scratch tree's
#                  sync, baseline build and map, when the first mutant is
#                  ready: CI's sample, whose set-up time is the day's change's
#                  build and must not eat the seconds given to mutants)
#   --reach MODE   generated mutants: select each one's tests by the reach
#                  map (ci/reach.sh) of this tree: auto (the default) builds
#                  the map when the cache lacks it, use only takes a cached
#                  one, off never; lacking this tree's, the newest cached map
#                  of an ancestor commit; without a map a mutant runs its area
#   --trust-baseline BUILD  generated mutants: BUILD (same configuration) has
#                  just passed every pass on this very tree (ci/test.sh's
#                  build-ci): no check of the killing tests, no final rebuild
#   NAME ...       only these mutants (file names without .patch), in this order
# Environment: XO_MUTATE_DIR (scratch tree and build, default build-mutate/),
#   XO_REACH_CACHE (where reach maps are kept, default reach/ of the scratch
#   directory; see reach_map),
#   XO_MUTATE_TIMEOUT (per-test ctest timeout in seconds, default 300),
#   XO_MUTGEN_TIMEOUT (generated mutants: the longest one pass may run when
#   no test times are known yet, 900; else three times the pass's time
#   + XO_MUTGEN_SLACK, 30).
# Exit: 0 every non-equivalent mutant caught; 1 some missed (survived); 2
# usage error, a mutant that does not apply (or, hand-written, build), or a
# baseline that fails.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # XO_ROOT, XO_ISA_LEVELS, XO_ISA_TESTS
MUTANTS_DIR=$XO_ROOT/ci/mutants
MUTGEN_TIMEOUT=${XO_MUTGEN_TIMEOUT:-900}
# seconds a generated mutant's pass may run past 3x its baseline time
MUTGEN_SLACK=${XO_MUTGEN_SLACK:-30}

die() {
    echo "xo: mutate: $*" >&2
    exit 2
}

mode=all sample=0 offset= list=0 check=0 keep_going=0 db= out_dir=$XO_ROOT/out
from= budget=0 trust= reach=auto hard_stop=0 box_from=start
jobs=${XO_JOBS:-$(nproc 2>/dev/null || echo 2)}
names=()
while [ $# -gt 0 ]; do
    case $1 in
    --all) mode=all ;;
    --sample)
        [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*$ ]] || die "--sample needs a count >= 1"
        mode=sample sample=$2
        shift
        ;;
    --offset)
        [ $# -ge 2 ] && [[ $2 =~ ^[0-9]+$ ]] || die "--offset needs an integer >= 0"
        offset=$2
        shift
        ;;
    --list) list=1 ;;
    --from)
        [ $# -ge 2 ] && [ -n "$2" ] || die "--from needs a directory"
        from=$2
        shift
        ;;
    --budget)
        [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*$ ]] || die "--budget needs seconds >= 1"
        budget=$2
        shift
        ;;
    --stop)
        [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*$ ]] || die "--stop needs seconds >= 1"
        hard_stop=$2
        shift
        ;;
    --box-from)
        [ $# -ge 2 ] && [[ $2 =~ ^(start|setup)$ ]] || die "--box-from needs start or setup"
        box_from=$2
        shift
        ;;
    --trust-baseline)
        [ $# -ge 2 ] && [ -n "$2" ] || die "--trust-baseline needs the build directory that passed"
        trust=$2
        shift
        ;;
    --reach)
        [ $# -ge 2 ] && [[ $2 =~ ^(auto|use|off)$ ]] || die "--reach needs auto, use or off"
        reach=$2
        shift
        ;;
    --check) check=1 ;;
    --keep-going) keep_going=1 ;;
    -j)
        [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*$ ]] || die "-j needs a count >= 1"
        jobs=$2
        shift
        ;;
    -j[1-9]*)
        [[ ${1#-j} =~ ^[1-9][0-9]*$ ]] || die "bad option '$1'"
        jobs=${1#-j}
        ;;
    --db)
        [ $# -ge 2 ] && [ -n "$2" ] || die "--db needs a file"
        db=$2
        shift
        ;;
    --out)
        [ $# -ge 2 ] && [ -n "$2" ] || die "--out needs a directory"
        out_dir=$2
        shift
        ;;
    -h | --help)
        sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) names+=("$1") ;;
    esac
    shift
done
timeout=${XO_MUTATE_TIMEOUT:-300}
[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "XO_MUTATE_TIMEOUT='$timeout' must be seconds >= 1"
[[ $MUTGEN_TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "XO_MUTGEN_TIMEOUT='$MUTGEN_TIMEOUT' must be seconds >= 1"
[[ $MUTGEN_SLACK =~ ^[0-9]+$ ]] || die "XO_MUTGEN_SLACK='$MUTGEN_SLACK' must be seconds >= 0"
if [ -n "$from" ]; then
    [ -d "$from" ] || die "--from $from: no such directory"
    MUTANTS_DIR=$(cd "$from" && pwd)
fi
if [ -n "$trust" ]; then
    [ -f "$trust/CMakeCache.txt" ] || die "--trust-baseline $trust: not a build directory"
    trust=$(cd "$trust" && pwd)
fi

# ---- the mutant list ------------------------------------------------------------

# header FILE KEY: the value of '# KEY: value' in the comment block of FILE
# (a mutant of MUTANTS_DIR: read once for all of them, into HDR).
declare -A HDR=()
header() {
    local n=${1##*/}
    printf '%s\n' "${HDR[${n%.patch}/$2]:-}"
}
read_headers() {
    local n k v
    while IFS=$'\t' read -r n k v; do
        HDR[$n/$k]=$v
    done < <(awk 'FNR == 1 { n = FILENAME; sub(/.*\//, "", n); sub(/\.patch$/, "", n) }
        /^diff --git/ { nextfile }
        /^# [a-z]+:/ { k = $2; sub(/:$/, "", k); v = $0; sub(/^# [a-z]+: */, "", v)
                       if (!((n, k) in seen)) { seen[n, k] = 1; print n "\t" k "\t" v } }' \
        "$MUTANTS_DIR"/*.patch)
}

all=()
for f in "$MUTANTS_DIR"/*.patch; do
    [ -e "$f" ] && all+=("$(basename "$f" .patch)")
done
[ ${#all[@]} -eq 0 ] || read_headers
if [ ${#all[@]} -eq 0 ] && [ -n "$from" ]; then
    echo "mutate: no mutants in $MUTANTS_DIR: nothing to run"
    exit 0
fi
[ ${#all[@]} -gt 0 ] || die "no mutants in $MUTANTS_DIR"
generated=0 handwritten=0
for n in "${all[@]}"; do
    f=$MUTANTS_DIR/$n.patch
    [ -n "${HDR[$n/class]:-}" ] || die "$f: header has no '# class:' line"
    if [ -n "${HDR[$n/generated]:-}" ]; then
        generated=$((generated + 1))
        for k in file line operator; do
            [ -n "${HDR[$n/$k]:-}" ] || die "$f: a generated mutant's header needs '# $k:'"
        done
    else
        handwritten=$((handwritten + 1))
    fi
    e=${HDR[$n/expect]:-} q=${HDR[$n/equivalent]:-}
    [ "$e" = caught ] || [ -n "$q" ] ||
        die "$f: header needs '# expect: caught' or '# equivalent: <reason>'"
    [ -z "$q" ] || [ -z "$e" ] || die "$f: header has both 'expect' and 'equivalent'"
done

[ $generated -eq 0 ] || [ $handwritten -eq 0 ] ||
    die "$MUTANTS_DIR mixes generated and hand-written mutants: give them separate directories"
[ $generated -gt 0 ] || { [ "$budget" = 0 ] && [ "$hard_stop" = 0 ] && [ -z "$trust" ] && [ "$box_from" = start ]; } ||
    die "--budget, --stop, --box-from and --trust-baseline are for generated mutants (ci/mutgen.py, --from DIR)"
selected=()
if [ ${#names[@]} -gt 0 ]; then
    for n in "${names[@]}"; do
        n=$(basename "$n" .patch)
        [ -f "$MUTANTS_DIR/$n.patch" ] || die "no mutant '$n' in $MUTANTS_DIR"
        selected+=("$n")
    done
elif [ $mode = sample ]; then
    total=${#all[@]}
    [ "$sample" -le "$total" ] || sample=$total
    # a window of `sample` mutants that moves by `sample` every day
    [ -n "$offset" ] || offset=$(($(date -u +%s) / 86400 * sample))
    for ((i = 0; i < sample; i++)); do
        selected+=("${all[$(((offset + i) % total))]}")
    done
else
    selected=("${all[@]}")
fi

if [ $list = 1 ]; then
    for n in "${selected[@]}"; do
        f=$MUTANTS_DIR/$n.patch
        q=$(header "$f" equivalent)
        printf '%-40s %-24s %s\n' "$n" "$(header "$f" class)" \
            "$([ -n "$q" ] && echo "equivalent: $q" || echo "expect: caught")"
    done
    exit 0
fi

command -v git >/dev/null || die "git is needed to apply the mutants"
if [ $check = 1 ]; then
    stale=()
    for n in "${selected[@]}"; do
        (cd "$XO_ROOT" && git apply --check "$MUTANTS_DIR/$n.patch" 2>/dev/null) || stale+=("$n")
    done
    if [ ${#stale[@]} -gt 0 ]; then
        echo "xo: mutate: ${#stale[@]} mutant(s) no longer apply to the tree: ${stale[*]}" >&2
        exit 2
    fi
    echo "mutate: all ${#selected[@]} mutants have a valid header and apply to the tree"
    exit 0
fi
if [ -n "$db" ]; then
    command -v sqlite3 >/dev/null || die "--db needs the sqlite3 command (Debian package sqlite3)"
    [ -f "$db" ] || die "--db $db: no such perf store (xo perf record creates one)"
    # 0x786f7064 = XO_PERFDB_APP_ID (perfdb/perfdb.h): only add a table to a crossover store
    app=$(sqlite3 -readonly "$db" 'PRAGMA application_id' 2>/dev/null) ||
        die "--db $db: not a readable SQLite database"
    [ "$app" = 2020569188 ] || die "--db $db: not a crossover perf store (application_id $app)"
fi
mkdir -p "$out_dir" || die "--out $out_dir: cannot create the directory"

# ---- the scratch tree -----------------------------------------------------------

S=${XO_MUTATE_DIR:-$XO_ROOT/build-mutate}
REACH_CACHE=${XO_REACH_CACHE:-$S/reach}
# The variables that tell this script where its scratch tree and maps are
# are read here and kept out of the environment of every test it runs: the
# suites that run ci/mutate.sh on a small project of their own (ci.mutgen.*)
# would otherwise build their maps in this run's cache and sync into its
# scratch tree, removing what it is building there.
unset XO_MUTATE_DIR XO_REACH_CACHE
SRC=$S/src B=$S/build LOGS=$S/logs
mkdir -p "$SRC" "$B" "$LOGS" || die "$S: cannot create the scratch directory"
exec 9>"$S/lock" && flock -n 9 ||
    die "$S: another ci/mutate.sh is running there (XO_MUTATE_DIR picks another scratch tree)"
SCRATCH_GIT=(git -C "$SRC" -c user.name=xo-mutate -c user.email=xo-mutate@localhost)

# Copies the checkout's files (tracked and untracked, not ignored) into
# $SRC, touching only files whose content differs so the build stays
# incremental; $SRC is its own git repository (apply, revert).
sync_tree() {
    local list=$S/files.txt f
    git -C "$XO_ROOT" ls-files -co --exclude-standard >"$list" || return 1
    [ -d "$SRC/.git" ] || git init -q "$SRC" || return 1
    "${SCRATCH_GIT[@]}" checkout -q -- . 2>/dev/null # undo an interrupted mutant
    # one process for the ~2200 files, not a cmp and a cp each (4400
    # processes, 20-40 s of a CI job's set-up on a fresh scratch tree); a
    # plain write: the copy is newer than any object built from the old
    # content, and its mode bits follow the checkout's (scripts stay
    # executable)
    python3 - "$XO_ROOT" "$SRC" "$list" <<'PY' || return 1
import os, shutil, sys
root, src, listing = sys.argv[1:4]
with open(listing, encoding="utf-8", errors="surrogateescape") as f:
    names = f.read().split("\n")
for name in names:
    a, b = os.path.join(root, name), os.path.join(src, name)
    if not name or not os.path.isfile(a):
        continue
    with open(a, "rb") as f:
        data = f.read()
    try:
        with open(b, "rb") as f:
            if f.read() == data:
                continue
    except OSError:
        pass
    os.makedirs(os.path.dirname(b), exist_ok=True)
    if os.path.islink(b):
        os.remove(b)
    with open(b, "wb") as f:
        f.write(data)
    shutil.copymode(a, b)
PY
    # files gone from the checkout
    "${SCRATCH_GIT[@]}" ls-files | grep -vxFf "$list" | while IFS= read -r f; do
        rm -f "$SRC/$f"
    done
    "${SCRATCH_GIT[@]}" add -A . && "${SCRATCH_GIT[@]}" commit -q --allow-empty -m sync
}

# Fingerprint of the tree's code (not ci/ nor the docs, which no test
# builds or reads): a baseline holds while it is unchanged.
fingerprint() {
    "${SCRATCH_GIT[@]}" ls-files -s | grep -v -e '	ci/' -e '	docs/' -e '\.md$' | sha1sum |
        cut -c1-40
}

# build LOG [MUTANT]: builds the scratch tree; BUILD_TARGETS (when set)
# narrows it to what the selected tests run. A test may run a binary its
# command does not name (a script finding it beside another), so no binary
# may keep an earlier mutant: every target built while a mutant was applied
# (the file $S/dirty-targets, as try_mutant runs in a subshell; "all" after
# a whole build) is built again with every later build, which puts the
# current tree (mutant or not) into it; a whole build empties it. Make
# relinks only those that depend on a file that changed since.
build() {
    local targets='' dirty
    if [ ! -f "$B/CMakeCache.txt" ]; then
        cmake -S "$SRC" -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXO_WERROR=ON >"$1" 2>&1 ||
            return 1
    fi
    dirty=$(cat "$S/dirty-targets" 2>/dev/null)
    if [ -n "$BUILD_TARGETS" ] && [ "$dirty" != all ]; then
        # shellcheck disable=SC2086 # targets are words
        targets=$(printf '%s\n' $BUILD_TARGETS $dirty | sort -u | tr '\n' ' ')
    fi
    if [ -n "${2:-}" ]; then
        # written before the build: one that fails may have linked some
        echo "${targets:-all}" >"$S/dirty-targets" || return 1
    fi
    # shellcheck disable=SC2086 # targets are words
    cmake --build "$B" -j"$jobs" ${targets:+--target $targets} >>"$1" 2>&1 || return 1
    [ -n "$targets" ] || [ -n "${2:-}" ] || rm -f "$S/dirty-targets"
}
BUILD_TARGETS= # generated mutants selected by reach: only what their tests run

# Writes ctest's cost file so that the cheapest tests (baseline times) run
# first: ctest starts tests in decreasing cost.
cheapest_first() {
    [ -f "$S/baseline-cost.txt" ] || return 0
    mkdir -p "$B/Testing/Temporary"
    awk '/^---/ { exit } NF == 3 { printf "%s 1 %.6f\n", $1, 100000 - $3 }' \
        "$S/baseline-cost.txt" >"$B/Testing/Temporary/CTestCostData.txt"
}

# The passes of ci/test.sh's test and races stages, as NAME:ENV:ARGS: the
# quick label, the ISA levels and tests of ci/lib.sh, the races label.
export XO_REQUIRE_OPENCL=${XO_REQUIRE_OPENCL:-1}
PASSES=("quick::-L quick")
for isa in "${XO_ISA_LEVELS[@]}"; do
    PASSES+=("isa-$isa:XO_CPU_ISA=$isa:-L quick -R $XO_ISA_TESTS")
done
PASSES+=("races::-L races")
NBASE=${#PASSES[@]} # the passes of CI; generated mutants append their areas' after

# The order of the passes for mutant file $1: the verdict does not depend
# on it, only the time to a failure. A mutant of OpenCL code only is most
# likely caught by the races label, which the ISA passes (cpu) cannot see.
pass_order() {
    local last=$((NBASE - 1))
    if grep -qv '^diff --git a/cl/' <<<"$(grep '^diff --git ' "$1")"; then
        seq 0 $last
    else
        echo 0 $last
        [ $last -lt 2 ] || seq 1 $((last - 1))
    fi
}

# pass_limit ARGS: the seconds a pass of a generated mutant may run: three
# times what its tests took unmutated (ctest's cost file), over the jobs,
# plus XO_MUTGEN_SLACK (30 s) for the start; XO_MUTGEN_TIMEOUT when the file lacks a time of
# one of its tests (a guess there once cut the races pass short of its
# Oclgrind minutes). Past it the mutant is caught by a hang.
pass_limit() {
    local est
    if [ -f "$S/baseline-cost.txt" ]; then
        # shellcheck disable=SC2086 # args are words
        est=$(ctest --test-dir "$B" -N $1 | sed -n 's/^ *Test *#[0-9]*: //p' |
            awk 'NR == FNR { if (NF == 3) c[$1] = $3; next }
                 { if ($1 in c) s += c[$1]; else u++ }
                 END { printf "%d", u ? -1 : s }' "$S/baseline-cost.txt" -)
    fi
    if [ "${est:--1}" -lt 0 ]; then
        echo "$MUTGEN_TIMEOUT"
    else
        echo $((3 * est / jobs + MUTGEN_SLACK))
    fi
}

# run_passes LOG STOP [ORDER...]: runs the passes (in ORDER, indices into
# PASSES; all in turn by default); prints the first failing test (pass/test)
# and returns 1, or returns 0 when all pass. STOP=1 stops at the first
# failure (mutants), 0 runs everything (baseline).
run_passes() {
    local log=$1 stop=$2 p name env args failed to i rc
    shift 2
    [ $# -gt 0 ] || set -- "${!PASSES[@]}"
    : >"$log"
    for i in "$@"; do
        p=${PASSES[$i]}
        name=${p%%:*} p=${p#*:} env=${p%%:*} args=${p#*:}
        to=$timeout
        [ "$name" = races ] && to=$((timeout * 3))
        cheapest_first
        rm -f "$B/Testing/Temporary/LastTestsFailed.log"
        echo "==== pass $name: ${env:+$env }ctest $args" >>"$log"
        local cap= left= stopping=0
        [ -z "$pass_cap" ] || cap=$(pass_limit "$args")
        if [ "$hard_stop" -gt 0 ] && [ -n "$pass_cap" ]; then
            left=$((hard_stop - ($(date +%s) - box_start)))
            if [ "$left" -le 0 ]; then
                echo "$name/(stopped)"
                return 1
            fi
            [ -n "$cap" ] && [ "$cap" -le "$left" ] || { cap=$left stopping=1; }
        fi
        # shellcheck disable=SC2086 # args are words
        env $env ${cap:+timeout -k 10 "$cap"} ctest --test-dir "$B" $args \
            -j"$jobs" --timeout "$to" --output-on-failure \
            $([ "$stop" = 1 ] && echo --stop-on-failure) >>"$log" 2>&1
        rc=$?
        if [ $stopping = 1 ] && { [ $rc -eq 124 ] || [ $rc -eq 137 ]; }; then
            echo "$name/(stopped)"
            return 1
        elif [ -n "$cap" ] && { [ $rc -eq 124 ] || [ $rc -eq 137 ]; }; then
            echo "$name/(timed out: the pass ran past ${cap}s)"
            return 1
        elif [ -s "$B/Testing/Temporary/LastTestsFailed.log" ]; then
            failed=$(head -n 1 "$B/Testing/Temporary/LastTestsFailed.log" | cut -d: -f2-)
            # a test that ran past its timeout kills the mutant too; say so
            grep -qE "[0-9]+ - $failed \(Timeout\)|Test +#[0-9]+: $failed .*\*\*\*Timeout" "$log" &&
                failed="$failed (timeout)"
            echo "$name/$failed"
            return 1
        elif grep -q '^No tests were found' <<<"$(tail -n 5 "$log")"; then
            : # an area or pass with no test of this project's own: nothing fails
        elif ! grep -q 'tests passed' <<<"$(tail -n 40 "$log")"; then
            echo "$name/(ctest failed)"
            return 1
        fi
    done
    return 0
}

# ---- generated mutants (ci/mutgen.py, docs/mutation.md "Generated mutants") ----

# area_passes FILE: sets AREA_IDX to the indices into PASSES of the tests of
# the mutated file's area (XO_MUTATE_AREAS in ci/lib.sh; an area's pass is
# appended to PASSES once) and AREA_RE to its ctest -R regex (empty: the
# whole quick pass is the area).
declare -A AREA_INDEX=()
AREA_IDX=() AREA_RE=
area_passes() {
    local folder=${1%%/*} entry p i parts
    AREA_IDX=() AREA_RE=
    for entry in "${XO_MUTATE_AREAS[@]}"; do
        [ "${entry%%=*}" = "$folder" ] || continue
        IFS=';' read -ra parts <<<"${entry#*=}"
        for p in "${parts[@]}"; do
            case $p in
            isa) for ((i = 0; i < NBASE; i++)); do [[ ${PASSES[$i]} == isa-* ]] && AREA_IDX+=("$i"); done ;;
            races) for ((i = 0; i < NBASE; i++)); do [[ ${PASSES[$i]} == races:* ]] && AREA_IDX+=("$i"); done ;;
            postgres)
                # ci/test.sh's postgres stage: the stores on a throwaway server
                if [ -z "${AREA_INDEX[postgres]:-}" ]; then
                    PASSES+=("postgres:XO_REQUIRE_POSTGRES=1:-L postgres")
                    AREA_INDEX[postgres]=$((${#PASSES[@]} - 1))
                fi
                AREA_IDX+=("${AREA_INDEX[postgres]}")
                ;;
            *)
                if [ -z "${AREA_INDEX[$folder]:-}" ]; then
                    PASSES+=("${p/#area:/area-$folder:}")
                    AREA_INDEX[$folder]=$((${#PASSES[@]} - 1))
                fi
                AREA_IDX=("${AREA_INDEX[$folder]}" "${AREA_IDX[@]}")
                [[ $p =~ -R\ ([^ ]+) ]] && AREA_RE=${BASH_REMATCH[1]}
                ;;
            esac
        done
    done
    [ ${#AREA_IDX[@]} -gt 0 ] || AREA_IDX=(0)
}

# The tree as synced, before the next mutant.
revert() {
    "${SCRATCH_GIT[@]}" checkout -q -- . && "${SCRATCH_GIT[@]}" clean -qfd -- . >/dev/null
}

# verify_killers: every test that caught a generated mutant passes on the
# unmutated tree (else its failure was not the mutant's doing): the tree is
# rebuilt clean and those tests run once, per pass, from KILLERS (lines
# PASS-INDEX<TAB>TEST). Returns 1 naming the first that fails. A kill by a
# whole pass running out of time is not re-run (the tree passed CI).
verify_killers() {
    local i re log=$LOGS/baseline-killers.test.log name env args
    [ -s "$S/killers.tsv" ] || return 0
    build "$LOGS/baseline-killers.build.log" ||
        die "baseline: the unmutated tree does not build (see $LOGS/baseline-killers.build.log)"
    : >"$log"
    for i in $(cut -f1 "$S/killers.tsv" | sort -u); do
        re=$(awk -F'\t' -v i="$i" '$1 == i { gsub(/[.]/, "\\.", $2); printf "%s^%s$", n++ ? "|" : "", $2 }' \
            "$S/killers.tsv")
        p=${PASSES[$i]}
        name=${p%%:*} p=${p#*:} env=${p%%:*} args=${p#*:}
        echo "==== verify pass $name: ${env:+$env }ctest $args -R $re" >>"$log"
        # shellcheck disable=SC2086 # args are words
        if ! env $env ctest --test-dir "$B" $args -R "$re" -j"$jobs" --timeout "$timeout" \
            --output-on-failure >>"$log" 2>&1; then
            echo "$name/$(head -n 1 "$B/Testing/Temporary/LastTestsFailed.log" 2>/dev/null | cut -d: -f2-)"
            return 1
        fi
    done
    return 0
}

# try_mutant NAME PASS...: applies, builds and runs the passes; prints
# RESULT<TAB>TEST with RESULT ERROR (does not apply), stillborn (does not
# build), caught or lived; reverts the tree.
try_mutant() {
    local n=$1 f=$MUTANTS_DIR/$1.patch r test=-
    shift
    if ! (cd "$SRC" && git apply "$f") >"$LOGS/$n.build.log" 2>&1; then
        r=ERROR test="(does not apply)"
    elif ! build "$LOGS/$n.build.log" "$n"; then
        r=stillborn test="(does not build: $LOGS/$n.build.log)"
    elif test=$(run_passes "$LOGS/$n.test.log" 1 "$@"); then
        r=lived test=-
    elif [[ $test == */\(stopped\) ]]; then
        r=pending test=-
    else
        r=caught
    fi
    revert || die "cannot revert $n in $SRC"
    printf '%s\t%s\n' "$r" "$test"
}

# ---- selection by reach (ci/reach.sh, docs/mutation.md "Selection by reach") ----

# reach_key: what the map depends on, the tree's files but the docs.
reach_key() {
    "${SCRATCH_GIT[@]}" ls-files -s | grep -v -e '	docs/' -e '\.md$' | sha1sum | cut -c1-40
}

# reach_map: sets MAP to a copy (in $S/reach-used) of the reach map to use,
# or empty, MAP_STALE to 1 when that map is of another tree, and MAP_LINE to
# what the stage's line says of it. Maps live in XO_REACH_CACHE (default
# reach/ of the scratch directory; CI and the nightly use
# ~/.cache/crossover/reach, which every clone on the machine shares): one
# folder KEY/ per map (tests.tsv, reach.tsv, funcs.tsv, unmapped, done), the
# one instrumented build/ that each new map reuses (incremental), and
# index.tsv, lines COMMIT<TAB>KEY oldest first, the commit each map was made
# at. The map of this very tree (KEY) is used as it is. Otherwise the newest
# map made at an ancestor of HEAD is used, stale (docs/mutation.md, "Selection
# by reach"); --reach auto first builds this tree's map. After a map is built
# the index keeps the REACH_KEEP (3) newest and the others are removed, so
# the cache holds at most that many maps and one build. A lock (flock on
# .lock) keeps a reader from copying a map that a builder is removing.
MAP= MAP_STALE=0 MAP_LINE="none"
REACH_KEEP=3
reach_map() {
    local root=$REACH_CACHE key head
    MAP= MAP_STALE=0 MAP_LINE="none"
    [ "$reach" != off ] || { MAP_LINE="off" && return 0; }
    key=$(reach_key)
    head=$(git -C "$XO_ROOT" rev-parse -q --verify HEAD 2>/dev/null) || head=
    # auto remakes this tree's map when it is missing or not whole
    if [ "$reach" = auto ] &&
        ! python3 "$XO_ROOT/ci/reach.py" check --map "$root/$key" --key "$key" >/dev/null 2>&1; then
        reach_build "$root" "$key" "$head"
    fi
    mkdir -p "$root" 2>/dev/null || return 0
    exec 8>>"$root/.lock" && flock -s 8 || return 0
    if [ -f "$root/$key/done" ]; then
        if reach_copy "$root/$key"; then
            MAP_LINE="exact (this tree${head:+, commit ${head:0:12}})"
            echo "mutate: reach map of this tree: $root/$key"
        else
            MAP_LINE="none (map refused)"
        fi
    else
        reach_older "$root" "$head"
    fi
    flock -u 8
    exec 8>&-
    return 0
}

# reach_copy DIR: copies map DIR's tables into $S/reach-used and sets MAP.
# DIR is named by the key of the tree it maps: a map whose `done` names
# another tree, or whose tables are not the rows `done` counts, is refused
# with one line (each mutant then runs its area).
reach_copy() {
    local d=$S/reach-used why
    if ! why=$(python3 "$XO_ROOT/ci/reach.py" check --map "$1" --key "${1##*/}" 2>&1); then
        echo "mutate: reach map refused, each mutant runs its area's tests: ${why#xo: reach: }"
        return 1
    fi
    rm -rf "$d" && mkdir -p "$d" &&
        cp "$1"/tests.tsv "$1"/reach.tsv "$1"/funcs.tsv "$1"/done "$d/" || return 1
    [ ! -f "$1/unmapped" ] || cp "$1/unmapped" "$d/" || return 1
    MAP=$d
}

# reach_index_ok ROOT: the index is whole (every line COMMIT<TAB>KEY, the
# last ended); a corrupt or truncated one is refused with one line.
reach_index_ok() {
    local f=$1/index.tsv bad
    [ -s "$f" ] || return 0
    bad=$(grep -nvxE $'[0-9a-f]{40}\t[0-9a-f]{40}' "$f" | head -n 1 | cut -d: -f1)
    if [ -z "$bad" ] && [ "$(tail -c 1 "$f" | od -An -tx1 | tr -d ' ')" != 0a ]; then
        bad=$(wc -l <"$f") bad=$((bad + 1))
    fi
    [ -z "$bad" ] && return 0
    echo "mutate: reach map index $f is corrupt at line $bad: refused, each mutant runs its area's tests"
    return 1
}

# reach_older ROOT HEAD: the newest map of the index made at an ancestor of
# HEAD (fewest commits from it), copied stale.
reach_older() {
    local root=$1 head=$2 c k n best= bestn=
    [ -n "$head" ] || { echo "mutate: no reach map of this tree and no commit to find an older one: each mutant runs its area's tests"; return 0; }
    reach_index_ok "$root" || { MAP_LINE="none (corrupt index refused)"; return 0; }
    while IFS=$'\t' read -r c k; do
        [ -f "$root/$k/done" ] || continue
        git -C "$XO_ROOT" merge-base --is-ancestor "$c" "$head" 2>/dev/null || continue
        n=$(git -C "$XO_ROOT" rev-list --count "$c..$head") || continue
        if [ -z "$bestn" ] || [ "$n" -le "$bestn" ]; then best=$c:$k bestn=$n; fi
    done 2>/dev/null <"$root/index.tsv" # no index yet: no older map
    if [ -z "$best" ]; then
        echo "mutate: no reach map of this tree nor of an ancestor in $root: each mutant runs its area's tests"
        return 0
    fi
    reach_copy "$root/${best#*:}" || { MAP_LINE="none (map refused)"; return 0; }
    MAP_STALE=1 MAP_LINE="older by $bestn commit(s) (commit ${best:0:12})"
    echo "mutate: reach map of commit ${best:0:12}, $bestn commit(s) before this tree: a mutant it does not place, or that lives through its tests, runs its area"
}

# reach_build ROOT KEY HEAD: builds this tree's map in ROOT/KEY (the build in
# ROOT/build), adds it to the index and keeps the REACH_KEEP newest.
reach_build() {
    local root=$1 key=$2 head=$3 t0 p keep
    mkdir -p "$root/$key" || return 0
    rm -rf "$root"/*/pcs "$root/$key/done"
    echo "mutate: building the reach map of this tree in $root/$key"
    # every pass CI runs but the races label (Oclgrind, minutes a test):
    # the OpenCL host code it is for keeps its area (ci/reach.py)
    local mapped=() unmapped=
    for p in "${PASSES[@]:0:NBASE}" "${PASSES[${AREA_INDEX[postgres]}]}"; do
        [[ $p == races:* ]] && unmapped=races || mapped+=("$p")
    done
    echo "$unmapped" >"$root/$key/unmapped"
    # with a --budget, the map may take half of what is left of it: a map
    # cut short leaves its build for the next one and this run takes the
    # newest older map
    local cap=()
    if [ "$budget" -gt 0 ]; then
        t0=$(((budget - ($(date +%s) - start_all)) / 2))
        [ "$t0" -ge 1 ] || t0=1
        cap=(timeout -k 10 "$t0")
    fi
    t0=$(date +%s)
    if ! "${cap[@]}" bash "$XO_ROOT/ci/reach.sh" --src "$SRC" --map "$root/$key" --key "$key" \
        --build "$root/build" -j "$jobs" "${mapped[@]}" >"$LOGS/reach.log" 2>&1; then
        echo "mutate: the reach map could not be built (see $LOGS/reach.log)"
        return 0
    fi
    rm -rf "$root/$key/pcs"
    echo "mutate: reach map built in $(($(date +%s) - t0))s ($(tail -n 2 "$LOGS/reach.log" | head -n 1))"
    [ -n "$head" ] || return 0
    exec 8>>"$root/.lock" && flock -x 8 || return 0
    # a corrupt index is replaced by this map's line alone
    { reach_index_ok "$root" >/dev/null && cat "$root/index.tsv" 2>/dev/null; } |
        awk -F'\t' -v k="$key" '$2 != k' >"$root/index.new"
    printf '%s\t%s\n' "$head" "$key" >>"$root/index.new"
    tail -n "$REACH_KEEP" "$root/index.new" >"$root/index.tmp" && mv "$root/index.tmp" "$root/index.tsv"
    rm -f "$root/index.new"
    keep=$(cut -f2 "$root/index.tsv")
    for p in "$root"/*/; do
        p=${p%/}
        [ "${p##*/}" = build ] || grep -qxF "${p##*/}" <<<"$keep" || rm -rf "$p"
    done
    flock -u 8
    exec 8>&-
}

# reach_select: SEL_KIND[mutant] (test, none or area), SEL_WHY[mutant] and
# SEL_TESTS[mutant] (lines PASS<TAB>TEST, cheapest first) for the selected
# mutants, from the map; all area without one. SEL_CONFIRM[mutant] is set
# where the tests are those of an OpenCL kernel's launcher: one that lives
# through them runs its area too.
declare -A SEL_KIND=() SEL_WHY=() SEL_TESTS=() SEL_CONFIRM=() TEST_TARGETS=() FUNC=()
reach_select() {
    local n k a b c d
    # the stage's line says which map chose the tests
    echo "reach map: $MAP_LINE" | tee "$out_dir/mutgen-map.txt"
    for n in "${selected[@]}"; do SEL_KIND[$n]=area SEL_WHY[$n]="no reach map"; done
    [ -n "$MAP" ] || return 0
    # the function each mutant's line is in on this tree: a queued mutant's
    # header names where its line was when it was made
    while IFS=$'\t' read -r n k; do
        a=$(header "$MUTANTS_DIR/$n.patch" function)
        [ "$k" != "?" ] || k=$a # not found: it does not apply (an ERROR)
        [ "$k" = "$a" ] || echo "mutate: $n: its line is in $k now, not in $a (its header)"
        FUNC[$n]=$k
    done < <(for n in "${selected[@]}"; do printf '%s/%s.patch\0' "$MUTANTS_DIR" "$n"; done |
        xargs -0 python3 "$XO_ROOT/ci/mutgen.py" function --repo "$SRC")
    for n in "${selected[@]}"; do
        printf '%s\t%s\t%s\n' "$n" "$(header "$MUTANTS_DIR/$n.patch" file)" \
            "${FUNC[$n]:-$(header "$MUTANTS_DIR/$n.patch" function)}"
    done | python3 "$XO_ROOT/ci/reach.py" select --map "$MAP" >"$S/selection.tsv" || {
        echo "mutate: the reach map cannot be read: each mutant runs its area's tests"
        return 0
    }
    while IFS=$'\t' read -r n k a b c; do
        case $k in
        area) SEL_KIND[$n]=area SEL_WHY[$n]=$a ;;
        none) SEL_KIND[$n]=none SEL_TESTS[$n]= ;;
        test | confirm)
            [ "${SEL_KIND[$n]}" = test ] || SEL_TESTS[$n]=
            SEL_KIND[$n]=test
            [ "$k" = test ] || SEL_CONFIRM[$n]=1
            SEL_TESTS[$n]+="$a"$'\t'"$b"$'\n'
            ;;
        esac
    done <"$S/selection.tsv"
    [ "$MAP_STALE" = 0 ] || reach_unknown
    # without the times of a passing baseline, the map's (an instrumented
    # build's, so slower) order the tests cheapest first and bound a pass
    [ -f "$S/baseline-cost.txt" ] ||
        awk -F'\t' 'NF == 4 && $3 > t[$2] { t[$2] = $3 } END { for (n in t) printf "%s 1 %s\n", n, t[n] }' \
            "$MAP/tests.tsv" >"$S/baseline-cost.txt"
    # the targets each test runs: the build's files its command and
    # environment name (ctest --show-only=json-v1); none known: all
    ctest --test-dir "$B" --show-only=json-v1 >"$S/tests.json" 2>/dev/null &&
        cmake --build "$B" --target help 2>/dev/null | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p' \
            >"$S/targets.txt"
    while IFS=$'\t' read -r a b; do
        TEST_TARGETS[$a]=$b
    done < <(python3 - "$S/tests.json" "$S/targets.txt" "$B" <<'PY'
import json, os, sys
try:
    tests = json.load(open(sys.argv[1]))["tests"]
    targets = set(open(sys.argv[2]).read().split())
except (OSError, ValueError, KeyError):
    sys.exit(0)
build = os.path.realpath(sys.argv[3])
for t in tests:
    words = list(t.get("command") or [])
    for p in t.get("properties", []):
        if p.get("name") == "ENVIRONMENT":
            words += [v.split("=", 1)[-1] for v in p.get("value", [])]
    need = set()
    for w in words:
        for part in w.replace(":", " ").split():
            if os.path.realpath(part).startswith(build + "/") and os.path.basename(part) in targets:
                need.add(os.path.basename(part))
    if need:
        print("%s\t%s" % (t["name"], " ".join(sorted(need))))
PY
    )
}

# sample_order: in a sample (CI's time box) the sample's mutants run
# cheapest first, by the summed baseline times of the tests the map chose
# for each, so that the box finishes as many as it can. Which mutants are
# in the sample was settled by id before this; a mutant that runs its area
# (no map places it) goes last, and ties keep the order given. A full or
# nightly run keeps the order given: its pending mutants are queued, and
# a queue ordered by cost would starve its dearest ones.
sample_order() {
    [ $mode = sample ] || return 0
    local n
    mapfile -t selected < <(for n in "${selected[@]}"; do
        printf '%s\t%s\t%s\n' "$n" "${SEL_KIND[$n]}" "$(cut -f2 <<<"${SEL_TESTS[$n]:-}" | tr '\n' ' ')"
    done | awk -F'\t' -v stale="$MAP_STALE" '
        FILENAME == ARGV[1] { split($0, w, " "); if (w[3] != "") c[w[1]] = w[3]; next }
        {
            t = 0
            # under an older map a mutant no test reached runs its area
            if ($2 == "area" || ($2 == "none" && stale == 1)) t = 1e9
            else { k = split($3, ts, " "); for (i = 1; i <= k; i++) t += (ts[i] in c) ? c[ts[i]] : 30 }
            printf "%.3f\t%08d\t%s\n", t, FNR, $1
        }' <(cat "$S/baseline-cost.txt" 2>/dev/null) - | sort -t$'\t' -k1,1g -k2,2n | cut -f3)
}

# reach_unknown: under a map of another tree, the tests of the map's passes
# that it does not know (added since it was made) join the selection of
# every mutant it places (kind test) in their area: the area's tests when
# the area is a -R set, every one when it is the quick pass.
reach_unknown() {
    local p name e args t n re
    local new=()
    for p in $(cut -f1 "$MAP/tests.tsv" | sort -u); do
        for name in "${!PASSES[@]}"; do [ "${PASSES[$name]%%:*}" = "$p" ] && break; done
        [ "${PASSES[$name]%%:*}" = "$p" ] || continue
        e=${PASSES[$name]#*:} args=${e#*:} e=${e%%:*}
        # shellcheck disable=SC2086 # env and args are words
        env $e ctest --test-dir "$B" -N $args | sed -n "s/^ *Test *#[0-9]*: /$p\t/p"
    done >"$S/tests-now.tsv"
    mapfile -t new < <(awk -F'\t' 'NR == FNR { k[$1 FS $2] = 1; next } !(($1 FS $2) in k)' \
        "$MAP/tests.tsv" "$S/tests-now.tsv")
    [ ${#new[@]} -gt 0 ] || return 0
    echo "mutate: ${#new[@]} test(s) the older map does not know run for every mutant of their area"
    for n in "${selected[@]}"; do
        [ "${SEL_KIND[$n]}" = test ] || continue
        area_passes "$(header "$MUTANTS_DIR/$n.patch" file)"
        for t in "${new[@]}"; do
            re=${AREA_RE:-.}
            [[ ${t#*$'\t'} =~ $re ]] && SEL_TESTS[$n]+="$t"$'\n'
        done
    done
    return 0
}

# selected_passes MUTANT: appends to PASSES one pass per pass of the map that
# holds a test selected for MUTANT (its env, -R '^(TEST|...)$'), sets
# SEL_IDX to their indices (in the order of their cheapest test) and
# BUILD_TARGETS to what they run (empty: everything).
SEL_IDX=()
selected_passes() {
    local n=$1 p t re e i all_known=1 targets=" " order=()
    declare -A RE=()
    SEL_IDX=()
    while IFS=$'\t' read -r p t; do
        [ -n "$p" ] || continue
        re=$(printf '%s' "$t" | sed 's/[][\.^$*+?(){}|]/\\&/g')
        [ -n "${RE[$p]:-}" ] || order+=("$p")
        RE[$p]+="${RE[$p]:+|}$re"
        if [ -n "${TEST_TARGETS[$t]:-}" ]; then
            for e in ${TEST_TARGETS[$t]}; do [[ $targets == *" $e "* ]] || targets+="$e "; done
        else
            all_known=0
        fi
    done <<<"${SEL_TESTS[$n]}"
    for p in "${order[@]}"; do
        e=
        for i in "${!PASSES[@]}"; do
            [ "${PASSES[$i]%%:*}" = "$p" ] && { e=${PASSES[$i]#*:} e=${e%%:*}; break; }
        done
        PASSES+=("$p:$e:-R ^(${RE[$p]})\$")
        SEL_IDX+=($((${#PASSES[@]} - 1)))
    done
    BUILD_TARGETS=
    [ $all_known = 0 ] || BUILD_TARGETS=$(echo $targets)
}

# by_reach MUTANT (inside run_generated, whose RES, TEST, SECS and killed it
# uses): a listed equivalent is counted without a run; a mutant the map
# places runs the tests that reach its function, or none. Returns 1 when
# the mutant is left to the area path.
by_reach() {
    local n=$1 f=$MUTANTS_DIR/$1.patch fn r test t0 k
    fn=${FUNC[$n]:-$(header "$f" function)}
    # a mutant that does not apply is stale: an ERROR, whatever the map says
    if ! (cd "$SRC" && git apply --check "$f") >/dev/null 2>&1; then
        RES[$n]=ERROR TEST[$n]="(does not apply)" SECS[$n]=0
        printf '%-14s %-10s %-48s %4ss\n' "$n" ERROR "${TEST[$n]}" 0
        return 0
    fi
    if [ -n "$(header "$f" equivalent)" ] && [ $mode = sample ]; then
        # listed in ci/mutgen-equivalent.tsv with its reason: a sample (CI's
        # budget) does not run it; any other run does, and a listed one
        # that is caught is an ERROR of the stage (the list is wrong)
        RES[$n]=survived TEST[$n]="(listed equivalent: not run)" SECS[$n]=0
        printf '%-14s %-10s %-48s %4ss  (listed)\n' "$n" equivalent "${TEST[$n]}" 0
        return 0
    fi
    # under a map of another tree "no test reaches" is not known: the area
    [ "$MAP_STALE" = 1 ] && [ "${SEL_KIND[$n]}" = none ] && return 1
    case ${SEL_KIND[$n]} in
    none)
        RES[$n]=survived TEST[$n]="(no test reaches $fn)" SECS[$n]=0
        printf '%-14s %-10s %-48s %4ss  (reach)\n' "$n" survived "${TEST[$n]}" 0
        return 0
        ;;
    test)
        selected_passes "$n"
        t0=$(date +%s)
        IFS=$'\t' read -r r test < <(try_mutant "$n" "${SEL_IDX[@]}")
        BUILD_TARGETS=
        k=$(grep -c . <<<"${SEL_TESTS[$n]}")
        local why=
        if [ "$r" = lived ] && [ "$MAP_STALE" = 1 ]; then
            # the older map may miss a test that reaches fn now: the area
            # confirms a survivor
            why="older map: $k test(s); to its area"
        elif [ -n "${SEL_CONFIRM[$n]:-}" ] &&
            { [ "$r" = lived ] || { [ "$r" = caught ] && [[ $test == *'(timed out'* || $test == *'(timeout)' ]]; }; }; then
            # OpenCL kernel code, selected by its launcher: the area
            # confirms a survivor (ci/reach.py select). A timeout here is
            # no kill: the first test to run a changed kernel compiles its
            # program (tens of seconds in PoCL), which the launcher tests'
            # baseline times, and so their pass's cap, do not hold; the
            # area's passes, run after that compile, judge a hang.
            [ "$r" = lived ] || r="lived (${test#*/})"
            why="kernel: its launcher's $k test(s); to its area"
        fi
        if [ -n "$why" ]; then
            SECS[$n]=$(($(date +%s) - t0))
            printf '%-14s %-10s %-48s %4ss  (%s)\n' "$n" "$r" "" "${SECS[$n]}" "$why"
            [ ! -f "$LOGS/$n.test.log" ] || mv "$LOGS/$n.test.log" "$LOGS/$n.reach.test.log"
            return 1
        fi
        [ "$r" = lived ] && r=survived test="(lived through the $k test(s) that reach $fn)"
        [ "$r" = pending ] && test=
        [ "$r" = caught ] && killed "$test"
        RES[$n]=$r TEST[$n]=$test SECS[$n]=$(($(date +%s) - t0))
        printf '%-14s %-10s %-48s %4ss  (reach: %s test(s))\n' "$n" "$r" "$test" "${SECS[$n]}" "$k"
        return 0
        ;;
    esac
    return 1
}

# Generated mutants: each runs the tests of its file's area first, stopping
# at the first failure; one that lives through them is run on every other
# pass CI runs (the quick pass less the area's tests, the ISA passes, the
# races) before it is called a survivor. One that does not build is
# stillborn (the generator cannot know types), counted apart. --budget
# time-boxes the run: the mutants not started are pending, listed in
# mutgen-pending.txt for the next run.
run_generated() {
    local n f r test t0 eqv idx full e i failed
    local caught=0 survived=0 equiv=0 equiv_caught=0 stillborn=0 errors=0 pending=0
    local survivor_lines=() error_names=() lived=() eq_caught_names=()
    declare -A RES=() TEST=() SECS=()
    pass_cap=$MUTGEN_TIMEOUT
    : >"$S/killers.tsv"
    # the unmutated test times (cheapest tests first, each pass's time
    # limit): from the build that passed when trusted, else those of the
    # last full baseline here (hand-written mutants' runs write them)
    [ -z "$trust" ] || [ ! -f "$trust/Testing/Temporary/CTestCostData.txt" ] ||
        cp "$trust/Testing/Temporary/CTestCostData.txt" "$S/baseline-cost.txt"
    build "$LOGS/baseline.build.log" ||
        die "baseline: the unmutated tree does not build (see $LOGS/baseline.build.log)"
    trap 'revert; exit 130' INT TERM
    over() {
        local t=$(($(date +%s) - box_start))
        { [ "$budget" -gt 0 ] && [ $t -ge "$budget" ]; } || { [ "$hard_stop" -gt 0 ] && [ $t -ge "$hard_stop" ]; }
    }
    # killed TEST-LINE: remembers the pass and test that caught a mutant
    killed() {
        local pname=${1%%/*} t=${1#*/} k
        t=${t% (timeout)}
        [[ $t == \(* ]] && return 0
        for k in "${!PASSES[@]}"; do
            if [ "${PASSES[$k]%%:*}" = "$pname" ]; then
                printf '%s\t%s\n' "$k" "$t" >>"$S/killers.tsv"
                break
            fi
        done
        return 0
    }
    # the postgres stage's pass, which the map covers too
    if [ -z "${AREA_INDEX[postgres]:-}" ]; then
        PASSES+=("postgres:XO_REQUIRE_POSTGRES=1:-L postgres")
        AREA_INDEX[postgres]=$((${#PASSES[@]} - 1))
    fi
    reach_map
    reach_select
    sample_order
    if [ "$box_from" = setup ]; then
        box_start=$(date +%s)
        echo "mutate: set-up took $((box_start - start_all))s; the box counts from here"
    fi
    for n in "${selected[@]}"; do
        if over; then
            RES[$n]=pending
            continue
        fi
        f=$MUTANTS_DIR/$n.patch
        by_reach "$n" && continue
        # one that lived through its map's tests may have spent the budget
        if over; then
            RES[$n]=pending
            continue
        fi
        area_passes "$(header "$f" file)"
        idx=${AREA_IDX[*]}
        t0=$(date +%s)
        IFS=$'\t' read -r r test < <(try_mutant "$n" $idx)
        RES[$n]=$r TEST[$n]=$test SECS[$n]=$((${SECS[$n]:-0} + $(date +%s) - t0))
        [ "$r" = lived ] && lived+=("$n")
        [ "$r" = caught ] && killed "$test"
        printf '%-14s %-10s %-48s %4ss  (area)\n' "$n" "$r" "$test" "${SECS[$n]}"
    done
    for n in "${lived[@]}"; do
        if over; then
            RES[$n]=pending
            continue
        fi
        f=$MUTANTS_DIR/$n.patch
        area_passes "$(header "$f" file)"
        idx=${AREA_IDX[*]}
        full=()
        for i in $(pass_order "$f"); do
            [[ " $idx " == *" $i "* ]] && continue
            if [ "$i" = 0 ] && [ -n "$AREA_RE" ]; then
                # the quick pass less the area's tests, which it has passed
                i=$(printf '%s\n' "${PASSES[@]}" | grep -nxF "quick-rest::-L quick -E $AREA_RE" | cut -d: -f1)
                if [ -z "$i" ]; then
                    PASSES+=("quick-rest::-L quick -E $AREA_RE")
                    i=${#PASSES[@]}
                fi
                i=$((i - 1))
            fi
            full+=("$i")
        done
        t0=$(date +%s)
        [ ! -f "$LOGS/$n.test.log" ] || mv "$LOGS/$n.test.log" "$LOGS/$n.area.test.log"
        IFS=$'\t' read -r r test < <(try_mutant "$n" "${full[@]}")
        [ "$r" = lived ] && r=survived
        [ "$r" = pending ] && test=
        [ "$r" = caught ] && killed "$test"
        RES[$n]=$r TEST[$n]=$test SECS[$n]=$((${SECS[$n]} + $(date +%s) - t0))
        [ -z "$(header "$f" equivalent)" ] || [ "$r" != survived ] || r=equivalent
        printf '%-14s %-10s %-48s %4ss  (every pass)\n' "$n" "$r" "$test" "${SECS[$n]}"
    done
    trap - INT TERM
    if [ -n "$trust" ]; then
        echo "mutate: the tests that caught mutants are trusted to pass unmutated ($trust ran them)"
    elif ! failed=$(verify_killers); then
        die "baseline: $failed fails on the unmutated tree too, so what it caught is unknown (see $LOGS/baseline-killers.test.log)"
    elif [ -s "$S/killers.tsv" ]; then
        echo "mutate: the $(cut -f2 "$S/killers.tsv" | sort -u | wc -l) test(s) that caught mutants pass on the unmutated tree"
    fi
    # the next run starts from a clean build (a scratch tree kept for it)
    [ -n "$trust" ] || build "$LOGS/final.build.log" >/dev/null 2>&1

    local tsv=$out_dir/mutgen.tsv rows=$S/mutgen-rows.tsv
    printf 'mutant\tfile\tline\toperator\toriginal\tmutated\tresult\ttest\tseconds\treason\n' >"$tsv"
    : >"$rows"
    for n in "${selected[@]}"; do
        f=$MUTANTS_DIR/$n.patch
        r=${RES[$n]} eqv=$(header "$f" equivalent)
        case $r in
        caught) [ -n "$eqv" ] && r=caught-equivalent ;;
        survived) [ -n "$eqv" ] && r=equivalent ;;
        esac
        case $r in
        caught) caught=$((caught + 1)) ;;
        survived)
            survived=$((survived + 1))
            survivor_lines+=("$n $(header "$f" file):$(header "$f" line) $(header "$f" operator): $(header "$f" original) -> $(header "$f" mutated)$([ "${TEST[$n]:--}" = - ] || echo " ${TEST[$n]}")")
            ;;
        equivalent) equiv=$((equiv + 1)) ;;
        caught-equivalent) equiv=$((equiv + 1)) equiv_caught=$((equiv_caught + 1)) eq_caught_names+=("$n") ;;
        stillborn) stillborn=$((stillborn + 1)) ;;
        pending) pending=$((pending + 1)) ;;
        ERROR) errors=$((errors + 1)) error_names+=("$n") ;;
        esac
        RES[$n]=$r
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$(header "$f" file)" \
            "$(header "$f" line)" "$(header "$f" operator)" "$(header "$f" original)" \
            "$(header "$f" mutated)" "$r" "${TEST[$n]:--}" "${SECS[$n]:-0}" "$eqv" >>"$rows"
    done
    cat "$rows" >>"$tsv"
    # in the order the mutants were given, whether a mutant was never
    # started or lived through its area before the budget ran out
    for n in "${selected[@]}"; do
        [ "${RES[$n]:-}" = pending ] && echo "$n"
    done >"$out_dir/mutgen-pending.txt"

    local secs=$(($(date +%s) - start_all)) total=$((caught + survived)) when
    when=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    local summary="mutgen: caught $caught/$total ($stillborn stillborn, $equiv equivalent, $pending pending), survived: $survived"
    {
        echo "$summary"
        echo "commit $sha$([ "$dirty" = 1 ] && echo ' (dirty)'), $when, ${#selected[@]} of ${#all[@]} generated mutants, ${secs}s"
        for e in "${survivor_lines[@]}"; do echo "survivor: $e"; done
        [ $pending -eq 0 ] || echo "pending: $pending not run in the $([ "$budget" -gt 0 ] && echo "${budget}s budget" || echo "${hard_stop}s limit") (mutgen-pending.txt)"
        [ $errors -eq 0 ] || echo "ERROR: ${error_names[*]} did not apply"
        [ $equiv_caught -eq 0 ] ||
            echo "ERROR: ${eq_caught_names[*]} listed as equivalent but caught: remove it from ci/mutgen-equivalent.tsv"
    } >"$out_dir/mutgen.txt"
    cat "$out_dir/mutgen.txt"
    echo "mutate: results in $out_dir/mutgen.txt, mutgen.tsv, mutgen-pending.txt"
    [ -z "$db" ] || store_generated "$rows" "$when" || die "--db $db: cannot store the results"
    [ $errors -eq 0 ] && [ $equiv_caught -eq 0 ] || exit 2
    [ $survived -eq 0 ] || exit 1
    exit 0
}

# store_generated ROWS DATE: one row per mutant in table mutant_results.
store_generated() {
    local rows=$1 when=$2 rng sql=$S/mutgen-store.sql
    q() { printf "'%s'" "${1//\'/\'\'}"; }
    rng=$(header "$MUTANTS_DIR/${selected[0]}.patch" generated)
    rng=${rng##* }
    {
        echo "PRAGMA busy_timeout = 10000; BEGIN;"
        echo "CREATE TABLE IF NOT EXISTS mutant_results(id INTEGER PRIMARY KEY, date TEXT NOT NULL,
  sha TEXT NOT NULL, range TEXT, mutant TEXT NOT NULL, file TEXT NOT NULL, line INTEGER,
  operator TEXT NOT NULL, original TEXT, mutated TEXT, result TEXT NOT NULL, test TEXT,
  seconds INTEGER, reason TEXT);"
        while IFS=$'\t' read -r n file line op orig mut r test secs reason; do
            echo "INSERT INTO mutant_results(date, sha, range, mutant, file, line, operator,
  original, mutated, result, test, seconds, reason) VALUES($(q "$when"), $(q "$sha"),
  $(q "$rng"), $(q "$n"), $(q "$file"), $line, $(q "$op"), $(q "$orig"), $(q "$mut"),
  $(q "$r"), $(q "$test"), $secs, $(q "$reason"));"
        done <"$rows"
        echo "COMMIT;"
    } >"$sql"
    sqlite3 "$db" <"$sql" >/dev/null || return 1
    echo "mutate: stored in $db (table mutant_results)"
}

pass_cap= # generated mutants: the longest one pass may run (XO_MUTGEN_TIMEOUT)
start_all=$(date +%s)
box_start=$start_all # where --budget and --stop count from (--box-from)
# the commit the results are for: the checkout as it is copied
sha=$(git -C "$XO_ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
dirty=$([ -n "$(git -C "$XO_ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] && echo 1 || echo 0)
echo "mutate: syncing the tree into $SRC"
sync_tree || die "cannot copy the tree into $SRC"
fp=$(fingerprint)
if [ $generated -gt 0 ]; then
    run_generated # never returns
fi
if [ -f "$S/baseline-ok" ] && [ "$(cat "$S/baseline-ok")" = "$fp" ] && [ -f "$S/baseline-cost.txt" ]; then
    echo "mutate: baseline: the tree is unchanged since the last passing baseline"
else
    rm -f "$S/baseline-ok"
    t0=$(date +%s)
    echo "mutate: baseline: building and testing the unmutated tree"
    build "$LOGS/baseline.build.log" ||
        die "baseline: the unmutated tree does not build (see $LOGS/baseline.build.log)"
    rm -f "$S/baseline-cost.txt" "$B/Testing/Temporary/CTestCostData.txt"
    if failed=$(run_passes "$LOGS/baseline.test.log" 0); then
        cp "$B/Testing/Temporary/CTestCostData.txt" "$S/baseline-cost.txt"
        echo "$fp" >"$S/baseline-ok"
        echo "mutate: baseline passed in $(($(date +%s) - t0))s"
    else
        die "baseline: the unmutated tree fails $failed (see $LOGS/baseline.test.log)"
    fi
fi

# ---- the mutants -------------------------------------------------------------------

caught=0 missed=0 equiv=0 errors=0 equiv_caught=0
missed_names=() error_names=()
tsv=$out_dir/mutation.tsv
printf 'mutant\tclass\tresult\ttest\tseconds\n' >"$tsv"
trap 'revert; exit 130' INT TERM

for n in "${selected[@]}"; do
    f=$MUTANTS_DIR/$n.patch
    cls=$(header "$f" class)
    eqv=$(header "$f" equivalent)
    t0=$(date +%s)
    result= test=-
    if ! (cd "$SRC" && git apply "$f") >"$LOGS/$n.build.log" 2>&1; then
        result=ERROR test="(does not apply)"
    elif ! build "$LOGS/$n.build.log"; then
        result=ERROR test="(does not build: $LOGS/$n.build.log)"
    elif test=$(run_passes "$LOGS/$n.test.log" 1 $(pass_order "$f")); then
        test=-
        [ -n "$eqv" ] && result=equivalent || result=missed
    else
        [ -n "$eqv" ] && result=caught-equivalent || result=caught
    fi
    revert || die "cannot revert $n in $SRC"
    dt=$(($(date +%s) - t0))
    case $result in
    caught) caught=$((caught + 1)) ;;
    missed) missed=$((missed + 1)) missed_names+=("$n") ;;
    equivalent) equiv=$((equiv + 1)) ;;
    caught-equivalent) equiv=$((equiv + 1)) equiv_caught=$((equiv_caught + 1)) ;;
    ERROR) errors=$((errors + 1)) error_names+=("$n") ;;
    esac
    printf '%-36s %-10s %-48s %4ss\n' "$n" "$result" "$test" "$dt"
    printf '%s\t%s\t%s\t%s\t%s\n' "$n" "$cls" "$result" "$test" "$dt" >>"$tsv"
    if [ "$result" = ERROR ] && [ $keep_going = 0 ]; then
        echo "mutate: stopping at the ERROR of $n (--keep-going goes on)" >&2
        break
    fi
done
trap - INT TERM
# After the last mutant the build dir holds objects of the reverted tree
# only once rebuilt: do it now so the next run starts incremental and clean.
build "$LOGS/final.build.log" >/dev/null 2>&1

total=$((caught + missed))
secs=$(($(date +%s) - start_all))
missed_list=${missed_names[*]:-none}
summary="mutation: caught $caught/$total non-equivalent ($equiv equivalent), missed: ${missed_list// /, }"
echo "$summary"
[ $equiv_caught -eq 0 ] ||
    echo "mutate: $equiv_caught mutant(s) marked equivalent failed a test: the reason is wrong"
[ $errors -eq 0 ] || echo "mutate: ERROR: ${error_names[*]} did not apply or build"
echo "mutate: total ${secs}s"

when=$(date -u +%Y-%m-%dT%H:%M:%SZ)
{
    echo "$summary"
    echo "commit $sha$([ $dirty = 1 ] && echo ' (dirty)'), $when, ${#selected[@]} of ${#all[@]} mutants, ${secs}s"
    [ $errors -eq 0 ] || echo "ERROR: ${error_names[*]}"
} >"$out_dir/mutation.txt"
hist=$out_dir/mutation-history.tsv
[ -f "$hist" ] || printf 'date\tcommit\tdirty\tcaught\ttotal\tequivalent\terrors\tmissed\tseconds\n' >"$hist"
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$when" "$sha" "$dirty" "$caught" "$total" \
    "$equiv" "$errors" "$missed_list" "$secs" >>"$hist"
echo "mutate: results in $out_dir/mutation.txt, mutation.tsv, mutation-history.tsv"

if [ -n "$db" ]; then
    q() { printf "'%s'" "${1//\'/\'\'}"; }
    sqlite3 "$db" "PRAGMA busy_timeout = 10000;
CREATE TABLE IF NOT EXISTS mutation_runs(id INTEGER PRIMARY KEY, date TEXT NOT NULL,
  sha TEXT NOT NULL, dirty INTEGER NOT NULL, caught INTEGER NOT NULL, total INTEGER NOT NULL,
  equivalent INTEGER NOT NULL, errors INTEGER NOT NULL, missed TEXT, seconds INTEGER,
  mutants INTEGER NOT NULL, mutants_all INTEGER NOT NULL);
INSERT INTO mutation_runs(date, sha, dirty, caught, total, equivalent, errors, missed,
  seconds, mutants, mutants_all) VALUES($(q "$when"), $(q "$sha"), $dirty, $caught, $total,
  $equiv, $errors, $(q "$missed_list"), $secs, ${#selected[@]}, ${#all[@]});" >/dev/null ||
        die "--db $db: cannot store the result"
    echo "mutate: stored in $db (table mutation_runs)"
fi

[ $errors -eq 0 ] || exit 2
[ $missed -eq 0 ] && [ $equiv_caught -eq 0 ] || exit 1
exit 0
