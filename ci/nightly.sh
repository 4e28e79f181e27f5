#!/usr/bin/env bash
# ci/nightly.sh - the nightly perf job (README): install what is missing, build
# Release (build-release/), run the seed experiment on cpu and cl, a seventh of
# the quick tests and of the long ones, record the perf set, time the PyTorch
# peer and the cpu benchmark beside it, one rotating long check, detect
# changes over the history and draw the report; then print the answer: which
# device is faster at which batch, the alarms with their verdicts, and where
# the report is.
#
# Every stage is a function, run in a process of its own (this script again,
# with --run-stage NAME) under the job's time budget; the terminal gets one
# summary line per stage (STYLE rule 17) and the stage's full output goes to
# logs/NAME.log. A stage that fails, is killed or runs out of budget fails
# alone: the report stage runs last whatever happened before it, on whatever
# store exists (an empty-store page when there is none), so report/index.html
# is always there. Everything the job writes lands in one ignored folder,
# out/nightly/, so the tree is left without untracked files.
#
# Nightly and weekly (docs/perf.md, "Nightly"): a night runs the every-night
# stages, a seventh of the quick tests and shard DAY/7 of the long ones
# (DAY = days since 1970-01-01 UTC, mod 7) and the rotating stage whose day
# it is, so all of those come round within a week; XO_NIGHTLY_FULL=1 (the
# weekly job) runs every stage, the weekly ones too, every test whole, and no
# budget unless XO_NIGHTLY_BUDGET is set.
#
# Environment:
#   XO_NIGHTLY_DIR     where everything goes (default out/nightly under the repository)
#   XO_NIGHTLY_BUDGET  seconds the whole job may take (default 1200; 0: no limit).
#                      A stage whose expected time does not fit what is left
#                      (less the report's reserve) is skipped, a stage that
#                      overruns is stopped; each says so in its line.
#   XO_NIGHTLY_RESERVE seconds kept back for detect and report (90)
#   XO_NIGHTLY_FULL=1  the weekly job (above)
#   XO_NIGHTLY_DAY     the rotation day 0-6 (default from the date)
#   XO_NIGHTLY_QUICK=1 `xo perf record --quick` (a 2-minute smoke run)
#   XO_NIGHTLY_STAGES  comma-separated stages to run (default all of the
#                      night); report always runs
#   XO_NIGHTLY_BUILD   the Release build folder (default build-release)
#   XO_NIGHTLY_KILL    a stage name: that stage's process is killed (SIGKILL)
#                      as it starts; the job's own test uses it to prove the
#                      report survives a dead stage
#   XO_MUTATE_SAMPLE   mutants the mutation stage runs (3, 6 in a full run; 0 skips it;
#                      `bash ci/mutate.sh --all` runs the whole list)
#   XO_MUTGEN_BUDGET   seconds the mutgen stage (the generated mutants of the last
#                      day's change; weekly, the reach map first) may take at most (1200; less when the
#                      job's budget leaves it less); the rest wait for the next night
#   XO_JOBS            build/test parallelism (nproc)
# Exit: 0 all stages run passed and no regression confirmed; 1 otherwise
# (a stage skipped for the budget is not a failure; its line says why);
# 2 a bad setting; 130 interrupted (the running stage is stopped too).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$XO_ROOT"

export XO_REQUIRE_OPENCL=${XO_REQUIRE_OPENCL:-1}
export CTEST_OUTPUT_ON_FAILURE=1
# the suites' temporary files on a tmpfs (ci/lib.sh xo_fast_tmpdir)
xo_fast_tmpdir
NIGHTLY_DIR=${XO_NIGHTLY_DIR:-$XO_ROOT/out/nightly}
case $NIGHTLY_DIR in /*) ;; *) NIGHTLY_DIR=$XO_ROOT/$NIGHTLY_DIR ;; esac
LOGS=$NIGHTLY_DIR/logs
DB=$NIGHTLY_DIR/perf.sqlite
REPORT=$NIGHTLY_DIR/report
NOTES_FILE=$NIGHTLY_DIR/notes.txt # lines worth repeating at the end
BUILD=${XO_NIGHTLY_BUILD:-build-release}
case $BUILD in /*) ;; *) BUILD=$XO_ROOT/$BUILD ;; esac
XO=$BUILD/cli/xo
FULL=${XO_NIGHTLY_FULL:-0}
DAY=${XO_NIGHTLY_DAY:-$(($(date -u +%s) / 86400 % 7))}
NOTE="" # what the running stage has to say in its summary line
mkdir -p "$LOGS" || exit 1

# add_note LINE: a line for the end of the job (a stage runs in a process of
# its own, so the lines go through a file).
add_note() {
    printf '%s\n' "$*" >>"$NOTES_FILE"
}

# The stages in the order they run: NAME WHEN SECONDS. WHEN is `every` (each
# night), a rotation day 0-6 (that night only) or `weekly` (the full run
# only); a full run runs every stage.
# SECONDS is what the stage takes on 2 quiet cores (estimated from the times
# measured on a loaded 2-core VM, docs/perf.md "Nightly"); the budget skips
# a stage that does not fit. The report's reserve (detect and report) is
# kept back from every other stage.
NIGHTLY_STAGES=(
    "deps every 5"
    "build every 200"
    "seed every 40"
    "test every 150"
    "record every 100"
    "planted every 240"
    "detect-scale every 60"
    "peer every 45"
    "bench every 40"
    "perf-scale 0 200"
    "explain 1 60"
    "keras 2 60"
    "zoo 2 300"
    "fuzz 3 330"
    "mutate 4 300"
    "explain 5 60"
    "perf-scale 6 200"
    "mutgen every 120"
    "bisect weekly 900"
    "instructions weekly 900"
    "counts weekly 600"
    "long-tests weekly 900"
    "coverage weekly 900"
    "asan weekly 700"
    "detect every 30"
)
# The every-night stages (planted and detect-scale among them) and the report come to
# about 850 s from a fresh clone (the build's 200 s are seconds when
# build-release/ is kept), which leaves a rotating stage its ~300 s of the
# 1200. The weekly stages (bisect, the instruction-count checks, the long
# tests, coverage, the full sanitizer pass) take minutes each: XO_NIGHTLY_FULL=1 runs them, with no budget.
REPORT_RESERVE=${XO_NIGHTLY_RESERVE:-90} # seconds kept for detect and report

stage_build() {
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DXO_WERROR=ON &&
        cmake --build "$BUILD" -j"$XO_JOBS"
    local rc=$?
    NOTE="${BUILD#"$XO_ROOT"/}/"
    return $rc
}

# ctest's "N% tests passed, ..." line of the last ctest run in this log.
ctest_tally() {
    grep -E 'tests passed' "$LOGS/$1.log" | tail -n 1
}

# The tests' files are thrown away: XO_FSYNC=0 (ci/test.sh says why).
# A seventh of the quick suites (ctest -I DAY+1,,7: every 7th test by
# number; CI runs them all on every push), then the long tests that split
# into shards (ctest label `sharded`; they read XO_TEST_SHARD=K/N and take
# every Nth input from the Kth): shard DAY/7 each night, so every test and
# every input is checked within a week; all of both in a full run.
stage_test() {
    local rc=0 shard=$DAY/7 quick=(-I "$((DAY + 1)),,7")
    [ "$FULL" = 1 ] && shard="" && quick=()
    XO_FSYNC=${XO_FSYNC:-0} ctest --test-dir "$BUILD" -L quick "${quick[@]}" -j"$XO_JOBS" --timeout 600 || rc=1
    NOTE="quick${quick:+ (every 7th from test $((DAY + 1)))}: $(ctest_tally test)"
    XO_TEST_SHARD=$shard XO_FSYNC=${XO_FSYNC:-0} ctest --test-dir "$BUILD" -L sharded -LE quick -j"$XO_JOBS" --timeout 1800 || rc=1
    NOTE="$NOTE; long tests, ${shard:+shard $shard of }every input: $(ctest_tally test)"
    return $rc
}

# The long tests that do not split (label nightly, not quick or sharded:
# perfdb.continuous builds two commits), whole, on their rotation day.
stage_long_tests() {
    if ! grep -q 'Total Tests: [1-9]' <<<"$(ctest --test-dir "$BUILD" -N -L nightly -LE 'quick|sharded')"; then
        NOTE="no such tests"
        return 0
    fi
    XO_FSYNC=${XO_FSYNC:-0} ctest --test-dir "$BUILD" -L nightly -LE 'quick|sharded' -j"$XO_JOBS" --timeout 1800
    local rc=$?
    NOTE="$(ctest_tally long-tests)"
    return $rc
}

# Keras itself loads the files xo writes: the keras.load_in_keras tests, which
# must run, not skip, with the python of the Keras venv (Keras 3 + JAX on the
# CPU at pinned versions, made once in a cache outside the clone and shared
# with ci/test.sh: ci/lib.sh xo_keras_python).
stage_keras() {
    local out py
    py=$(xo_keras_python) || {
        NOTE="cannot make the Keras venv (ci/lib.sh xo_keras_python; its log: ${XO_CACHE_DIR:-$HOME/.cache/crossover}/kvenv/install.log)"
        return 1
    }
    # the test in its parts (keras.load_in_keras.GROUP): every one must pass
    out=$(XO_KERAS_PYTHON=$py ctest --test-dir "$BUILD" -R '^keras\.load_in_keras\.' -V 2>&1)
    echo "$out"
    local ran passed
    ran=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: keras\.load_in_keras\.' <<<"$out")
    passed=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: keras\.load_in_keras\.[a-z0-9_]+ .*Passed' <<<"$out")
    if [ "$ran" = 0 ] || [ "$passed" != "$ran" ]; then
        NOTE="Keras did not load xo's files (or the test skipped)"
        return 1
    fi
    NOTE="Keras $(KERAS_BACKEND=jax "$py" -c 'import keras; print(keras.__version__)' 2>/dev/null) loads xo's .keras and .weights.h5: $(grep -o 'max |Keras - xo| [0-9.e-]*' <<<"$out" | head -1)"
}

# The question the project exists for, first: the seed experiment on cpu and
# cl (its table in the log, its JSON kept for scripts); the reference too in
# the full run (ten epochs of the naive oracle take minutes, and it is no
# contender for the answer). The note gives each device's train step and
# predict time.
stage_seed() {
    local devs=(--device cpu) rc
    grep -q '^cl  *available' <<<"$("$XO" devices)" && devs+=(--device cl)
    [ "$FULL" = 1 ] && devs=()
    "$XO" seed --json "${devs[@]}" >"$NIGHTLY_DIR/seed.json"
    rc=$?
    [ $rc -eq 0 ] && NOTE=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print("; ".join("%s: train step %.3g ms, predict 4000 %.3g ms" % (r["device"],
      r["train_ms_per_step"], 1e3 * r["predict_s"]) for r in d))' "$NIGHTLY_DIR/seed.json")
    return $rc
}

stage_explain() {
    # The cost model against the measurement (seed model, cpu and
    # cl, batch 1..8192): the fraction of points predicted within 2x and of
    # dominant costs named as measured; a benchmark, so it reports, it does
    # not fail on the target (suites/cli/explain_accuracy.py --require would).
    python3 suites/cli/explain_accuracy.py "$XO" --json "$NIGHTLY_DIR/explain.json"
    local rc=$?
    NOTE=$(tail -n 1 "$LOGS/explain.log")
    return $rc
}

# The times of the whole benchmark set (the counts: stage counts).
stage_record() {
    local args=(--db "$DB" --no-progress)
    [ "${XO_NIGHTLY_QUICK:-0}" = 1 ] && args+=(--quick)
    "$XO" perf record "${args[@]}"
    return $?
}

# The instruction counts (every ref and cpu benchmark under callgrind: many
# minutes, so weekly), into the same store as their own metric.
stage_counts() {
    local args=(--db "$DB" --no-progress --metric instructions)
    if ! command -v valgrind >/dev/null; then
        NOTE="skipped: no valgrind (install valgrind for instruction counts)"
        return 0
    fi
    [ "${XO_NIGHTLY_QUICK:-0}" = 1 ] && args+=(--quick)
    "$XO" perf record "${args[@]}"
}

# A python3 that imports torch: the one on PATH, else Debian's (python3-torch
# installs for /usr/bin/python3, which a pyenv or venv on PATH may hide).
find_torch_python() {
    local py
    for py in python3 /usr/bin/python3; do
        command -v "$py" >/dev/null && "$py" -c 'import torch' 2>/dev/null && {
            echo "$py"
            return 0
        }
    done
    return 1
}

stage_peer() {
    local py
    if ! py=$(find_torch_python) && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "peer: installing Debian's python3-torch (CPU build) for the PyTorch peer"
        apt-get install -y -qq --no-install-recommends python3-torch >/dev/null 2>&1
        py=$(find_torch_python)
    fi
    if [ -z "$py" ]; then
        NOTE="skipped: no python3 with PyTorch (apt-get install python3-torch)"
        return 0
    fi
    local args=(--xo "$XO" --db "$DB")
    [ "${XO_NIGHTLY_QUICK:-0}" = 1 ] && args+=(--quick)
    PYTHONDONTWRITEBYTECODE=1 "$py" scripts/peer_store.py "${args[@]}"
    local rc=$?
    NOTE="pytorch-cpu $([ $rc -eq 0 ] && echo stored || echo "failed (exit $rc)")"
    return $rc
}

# The cpu's speed targets against JAX: the zoo of five Keras models (scripts/zoo.py),
# xo cpu beside the JAX peer (scripts/peer_jax.py, jit over the whole step),
# with the Keras venv (ci/lib.sh xo_keras_python; the keras stage before it
# has made it); the table in the log, the figures in zoo.json. Targets
# missed are reported, not failed; a crash, or no venv, fails the stage.
stage_zoo() {
    local py
    py=$(xo_keras_python) || {
        NOTE="cannot make the Keras venv (ci/lib.sh xo_keras_python)"
        return 1
    }
    KERAS_BACKEND=jax PYTHONDONTWRITEBYTECODE=1 "$py" scripts/zoo.py --xo "$XO" \
        --json "$NIGHTLY_DIR/zoo.json" || return 1
    NOTE="$(grep -E '^3x target' "$LOGS/zoo.log"); $NIGHTLY_DIR/zoo.json"
}

# bench_note LOG: the workload table of bench_vs_pytorch.py (a 50-column
# workload name, then xo ms, torch ms, torch/xo and the worst round's ratio)
# as one line that names its columns.
bench_note() {
    awk 'length($0) > 50 && /^(predict|one epoch)/ {
        w = substr($0, 1, 50); sub(/ +$/, "", w); split(substr($0, 51), f, " ")
        printf "%s%s: xo %s ms, torch %s ms, torch/xo %s (worst round %s)",
            n++ ? "; " : "", w, f[1], f[2], f[3], f[4] }' "$1"
}

# The cpu backend's benchmark beside PyTorch's CPU build, in alternating
# rounds (the targets: predict 4000 <= 1 ms, epoch <= 10 ms, >= 10x).
stage_bench() {
    local py
    if ! py=$(find_torch_python); then
        "$XO" bench --repeat 9 || return 1
        NOTE="xo cpu alone (no PyTorch for a ratio): $(grep -E '^seed (predict|epoch)' "$LOGS/bench.log" |
            sed 's/  */ /g' | paste -sd ';' - | sed 's/;/; /g')"
        return 0
    fi
    local args=(--xo "$XO" --rounds 3 --repeat 5)
    [ "${XO_NIGHTLY_QUICK:-0}" = 1 ] && args=(--xo "$XO" --rounds 1 --repeat 3)
    PYTHONDONTWRITEBYTECODE=1 "$py" scripts/bench_vs_pytorch.py "${args[@]}"
    local rc=$?
    NOTE=$(bench_note "$LOGS/bench.log")
    return $rc
}

# The suites' power (docs/mutation.md): a sample of the mutants,
# a window that moves every night so the whole list comes round, against
# what CI runs; the figure goes to mutation.txt and the store. A missed
# mutant fails the stage (exit 1), as a confirmed regression does.
stage_mutate() {
    local n=3
    [ "$FULL" = 1 ] && n=6
    n=${XO_MUTATE_SAMPLE:-$n}
    if [ "$n" = 0 ]; then
        echo "mutate: skipped (XO_MUTATE_SAMPLE=0)"
        return 0
    fi
    local args=(--sample "$n" --keep-going --out "$NIGHTLY_DIR")
    [ -f "$DB" ] && args+=(--db "$DB")
    bash ci/mutate.sh "${args[@]}"
    local rc=$?
    add_note "mutation: $(head -n 1 "$NIGHTLY_DIR/mutation.txt" 2>/dev/null || echo "no result (exit $rc)")"
    return $rc
}

# Line and branch coverage of the quick suites per folder (ci/coverage.sh,
# docs/coverage.md): a --coverage build of its own (build-cov/, kept between
# runs, so later builds are incremental) and every quick test, so weekly; the
# figures go into the store for the report, the tables and todo.txt to
# coverage/. The note quotes the line % of the folders with a to-do list.
stage_coverage() {
    local args=(--out "$NIGHTLY_DIR/coverage") rc tsv=$NIGHTLY_DIR/coverage/coverage.tsv
    [ -f "$DB" ] && args+=(--db "$DB")
    rm -f "$tsv"
    bash ci/coverage.sh "${args[@]}"
    rc=$?
    if [ -f "$tsv" ]; then
        NOTE="lines covered by the quick suites: $(awk -F '\t' '
            $1 ~ /^(model|perfdb|kernels|cl)$/ && $2 > 0 {
                printf "%s%s %.1f%%", sep, $1, 100 * $3 / $2; sep = ", " }' "$tsv")"
        add_note "coverage: $NOTE (to-do: $NIGHTLY_DIR/coverage/todo.txt)"
    else
        NOTE="no coverage tables (exit $rc)"
    fi
    return $rc
}

# Every mutant ci/mutgen.py makes from the last day's change (HEAD's
# first-parent commits within 24 h of it; docs/mutation.md, "Generated
# mutants"), each against the tests that reach it by a reach map
# (ci/reach.sh), kept by commit in ${XO_CACHE_DIR:-~/.cache/crossover}/reach
# where CI finds them too: the weekly full run (XO_NIGHTLY_FULL=1) builds
# this tree's map (incrementally, no time cap without a job budget); other
# nights use the newest map of an ancestor, whose survivors are confirmed on
# their area (docs/mutation.md, "Selection by reach"); without any a mutant
# runs its area's tests. The line says which map. Time-boxed: the mutants not
# started by the stage's end (what the job's budget leaves it, less 30 s, at
# most XO_MUTGEN_BUDGET, 1200 s) are pending, kept in mutgen-queue/ and run first the next night (those that no
# longer apply are dropped, counted). Results go to mutgen.txt and table
# mutant_results of the store; a survivor not listed in
# ci/mutgen-equivalent.tsv fails the stage.
stage_mutgen() {
    local gen=$NIGHTLY_DIR/mutgen queue=$NIGHTLY_DIR/mutgen-queue run=$NIGHTLY_DIR/mutgen-run
    local names=() f n stale=0 queued=0 budget rc pend
    python3 ci/mutgen.py --since-day --per-line 0 --out "$gen" || return 1
    rm -rf "$run" && mkdir -p "$run" "$queue" || return 1
    for f in "$queue"/*.patch; do
        [ -e "$f" ] || continue
        n=$(basename "$f" .patch)
        if git apply --check "$f" 2>/dev/null; then
            cp "$f" "$run/" && names+=("$n") && queued=$((queued + 1))
        else
            stale=$((stale + 1))
        fi
    done
    for f in "$gen"/*.patch; do
        [ -e "$f" ] || continue
        n=$(basename "$f" .patch)
        [ -e "$run/$n.patch" ] || names+=("$n")
        cp "$f" "$run/" # today's header (an equivalent's reason) wins
    done
    rm -f "$queue"/*.patch
    if [ ${#names[@]} -eq 0 ]; then
        NOTE="no product-code line changed in the last day and none pending: nothing to run"
        return 0
    fi
    budget=${XO_MUTGEN_BUDGET:-1200}
    if [ -n "${XO_NIGHTLY_STAGE_LEFT:-}" ] && [ $((XO_NIGHTLY_STAGE_LEFT - 30)) -lt "$budget" ]; then
        budget=$((XO_NIGHTLY_STAGE_LEFT - 30))
    fi
    [ "$budget" -ge 1 ] || budget=1
    local args=(--from "$run" --reach use --out "$NIGHTLY_DIR")
    # the weekly run builds this tree's map; with no job budget, uncapped
    # and every mutant run
    [ "$FULL" = 1 ] && args[3]=auto
    if [ "$FULL" = 1 ] && [ -z "${XO_NIGHTLY_STAGE_LEFT:-}" ]; then budget="no budget"; else
        args+=(--budget "$budget") && budget=${budget}s; fi
    [ -f "$DB" ] && args+=(--db "$DB")
    rm -f "$NIGHTLY_DIR/mutgen-map.txt"
    XO_REACH_CACHE=${XO_REACH_CACHE:-${XO_CACHE_DIR:-$HOME/.cache/crossover}/reach} \
        bash ci/mutate.sh "${args[@]}" "${names[@]}"
    rc=$?
    while IFS= read -r n; do
        [ -n "$n" ] && cp "$run/$n.patch" "$queue/"
    done <"$NIGHTLY_DIR/mutgen-pending.txt" 2>/dev/null
    pend=$(find "$queue" -name '*.patch' | wc -l)
    NOTE="$(head -n 1 "$NIGHTLY_DIR/mutgen.txt" 2>/dev/null || echo "no result (exit $rc)"); ${#names[@]} mutants ($queued from the queue) in $budget; $pend pending for the next night$([ "$stale" = 0 ] || echo ", $stale stale pending dropped"); $(cat "$NIGHTLY_DIR/mutgen-map.txt" 2>/dev/null || echo "reach map: unknown")"
    add_note "$NOTE"
    return $rc
}

# exit 1 from detect = a confirmed regression of a backend under test (ref and
# peers are listed apart and never alarms): the stage fails, the job goes on.
# The load warning (other processes busy during the runs around a change) is
# repeated at the end, as compare prints it.
stage_detect() {
    if [ ! -f "$DB" ]; then
        NOTE="skipped: no store ($DB): nothing was recorded"
        return 0
    fi
    "$XO" perf detect --db "$DB"
    local rc=$? line log=$LOGS/detect.log
    NOTE=$(tail -n 1 "$log" | sed 's/^detect: //')
    while read -r line; do
        add_note "detect: $line"
    done < <(grep '^warning:' "$log")
    "$XO" perf detect --db "$DB" --json >"$NIGHTLY_DIR/detect.json" 2>/dev/null
    return $rc
}

# A page of its own where `xo perf report` cannot draw one (no xo, no store,
# or the report failed): the reason and the stage lines, so index.html is
# always there to open.
report_fallback() {
    mkdir -p "$REPORT" || return 1
    {
        echo "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>crossover nightly</title></head><body>"
        echo "<h1>crossover nightly: no perf report</h1><p>"
        sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g' <<<"$1"
        echo "</p><h2>Stages</h2><pre>"
        sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g' "$LOGS/stages.txt" 2>/dev/null
        echo "</pre></body></html>"
    } >"$REPORT/index.html"
}

# Runs last, whatever failed before it: the report of whatever the store
# holds, and the advice for the answer at the end.
stage_report() {
    rm -f "$NIGHTLY_DIR/advise.txt"
    if [ ! -x "$XO" ]; then
        report_fallback "No $XO (the build stage failed or did not run)."
        NOTE="no xo binary: a page with the stage lines only"
        return 1
    fi
    if [ ! -f "$DB" ]; then
        report_fallback "No perf store ($DB): no stage recorded anything."
        NOTE="no store: a page with the stage lines only"
        return 1
    fi
    if ! "$XO" perf report --db "$DB" --out "$REPORT"; then
        report_fallback "xo perf report failed on $DB (logs/report.log says why)."
        NOTE="xo perf report failed: a page with the stage lines only"
        return 1
    fi
    # the advice is the answer at the end; a store without model
    # measurements has none, and advise's one line says so there
    "$XO" perf advise --db "$DB" >"$NIGHTLY_DIR/advise.txt" 2>&1
    cat "$NIGHTLY_DIR/advise.txt"
    NOTE="$REPORT/index.html"
    return 0
}

# Bisect end to end: `xo perf bisect` on a planted history
# (ci/bisect_check.sh, which runs alone too): a temporary clone of HEAD gets
# 5 commits, the third running the cpu relu forward twice (a 2x slowdown of
# one op); bisect must name the third, exactly, with no false step. Its own
# store and builds in a temporary directory (the nightly store's history is
# left alone); the note gives the commit named, the wall time (target: under
# 15 minutes on the 2-core CI machine), the rounds per tested commit and the
# load; the log has bisect's progress, its "too close to call" lines among
# them.
stage_bisect() {
    local line rc
    bash ci/bisect_check.sh "$XO" "$NIGHTLY_DIR/bisect.json"
    rc=$?
    line=$(tail -n 1 "$LOGS/bisect.log" 2>/dev/null)
    NOTE=${line#bisect check: }
    return $rc
}

# Counts end to end: instruction counts as a metric, in a store of
# its own. (1) XO_NIGHTLY_COUNT_RECORDS (20) records of this build count the
# cpu ops of the seed model's shapes (--quick); compare --metric instructions
# of the first against each other must say SAME for every series (a false
# positive is any other verdict), and the note gives the largest spread of a
# series over all records. (2) A temporary clone with 5% extra work planted in
# the cpu relu forward (a second pass over the first 1/20 of its elements),
# built (Release, target xo) and recorded the same way: compare against the
# first record must flag op/relu/fwd/*/cpu SLOWER (+5% or so) and nothing else.
stage_instructions() {
    local tmp db src n=${XO_NIGHTLY_COUNT_RECORDS:-20} k fp=0 rc start spread
    local filter='^op/.*/cpu$'
    local rec=(--metric instructions --device cpu --quick --filter "$filter" --no-progress)
    command -v valgrind >/dev/null || {
        NOTE="skipped: valgrind not installed"
        return 0
    }
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/xo-count-check-XXXXXX") || return 1
    db=$tmp/counts.sqlite
    start=$(date +%s)
    for k in $(seq 1 "$n"); do
        "$XO" perf record --db "$db" "${rec[@]}" || { NOTE="record $k failed"; rm -rf "$tmp"; return 1; }
    done
    for k in $(seq 2 "$n"); do
        "$XO" perf compare --db "$db" --metric instructions --json run:1 "run:$k" >"$tmp/cmp.json"
        rc=$?
        [ $rc -le 1 ] || { NOTE="compare exit $rc"; rm -rf "$tmp"; return 1; }
        fp=$((fp + $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(r["verdict"] != "SAME" for r in d["results"]))' "$tmp/cmp.json")))
    done
    spread=$(sqlite3 "$db" "SELECT printf('%.4f%% (%s)', 100 * d, name) FROM (SELECT b.name AS name,
        max(r.max) / min(r.min) - 1 AS d FROM results r JOIN benchmarks b ON b.id = r.benchmark_id
        WHERE b.metric = 'instructions' GROUP BY b.id) ORDER BY d DESC LIMIT 1")
    echo "instructions: $n records, $((n - 1)) comparisons with the first: $fp series not SAME; largest spread $spread"
    # (2) the planted 5%
    src=$tmp/src
    git clone --quiet --shared "$XO_ROOT" "$src" && git -C "$src" checkout --quiet --detach HEAD &&
        python3 - "$src/kernels/cpu.c" <<'PY' || { NOTE="planting failed"; rm -rf "$tmp"; return 1; }
import sys
p = sys.argv[1]
s = open(p).read()
old = "\treturn ew_act(be, a, EW_RELU_FWD, false, 1);\n"
assert s.count(old) == 1, "cpu_relu_fwd not found"
new = ("\t{ /* planted: 5% extra work, the first 1/20 of the elements again */\n"
       "\t\tstruct ew_job extra = {.kind = EW_RELU_FWD, .x = xo_tensor_f32(a->src[0]),\n"
       "\t\t\t\t\t.y = xo_tensor_f32(a->dst[0]), .count = a->dst[0]->nelem / 20};\n"
       "\t\tenum xo_status st = ew_run(be, &extra, 1);\n"
       "\t\tif (st)\n\t\t\treturn st;\n\t}\n") + old
open(p, "w").write(s.replace(old, new))
PY
    # built as $XO was (build-release/: Release), so only the plant differs
    cmake -S "$src" -B "$tmp/build" -DCMAKE_BUILD_TYPE="${XO_COUNT_BUILD_TYPE:-Release}" \
        >"$tmp/build.log" 2>&1 &&
        cmake --build "$tmp/build" --target xo -j "$XO_JOBS" >>"$tmp/build.log" 2>&1 ||
        { cat "$tmp/build.log"; NOTE="planted build failed"; rm -rf "$tmp"; return 1; }
    XO_SOURCE_DIR=$src "$tmp/build/cli/xo" perf record --db "$db" "${rec[@]}" ||
        { NOTE="planted record failed"; rm -rf "$tmp"; return 1; }
    "$XO" perf compare --db "$db" --metric instructions --json run:1 "run:$((n + 1))" >"$tmp/planted.json"
    "$XO" perf compare --db "$db" --metric instructions run:1 "run:$((n + 1))" | grep -E 'SLOWER|FASTER|UNKNOWN'
    python3 - "$tmp/planted.json" "$fp" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
flagged = [r for r in d["results"] if r["verdict"] != "SAME"]
relu = [r for r in flagged if r["benchmark"].startswith("op/relu/fwd/") and r["verdict"] == "SLOWER"]
print("planted 5%%: %s; other series not SAME: %d" % (
    ", ".join("%s %+.2f%%" % (r["benchmark"], 100 * r["change"]) for r in relu) or "NOT FLAGGED",
    len(flagged) - len(relu)))
sys.exit(0 if relu and len(flagged) == len(relu) and sys.argv[2] == "0" else 1)
PY
    rc=$?
    NOTE="$n records: $fp false positives, spread $spread; planted +5% relu fwd: $([ $rc -eq 0 ] && echo flagged alone || echo FAILED), $(($(date +%s) - start)) s"
    rm -rf "$tmp"
    return $rc
}

# Files the job left in the tree that git would list as untracked: there
# must be none (everything goes to $NIGHTLY_DIR, build-release/ is ignored).
check_tree_clean() {
    command -v git >/dev/null && git -C "$XO_ROOT" rev-parse --git-dir >/dev/null 2>&1 || return 0
    local stray
    stray=$(git -C "$XO_ROOT" status --porcelain --untracked-files=all | grep '^??' | grep -v -F -f "$UNTRACKED_BEFORE")
    [ -z "$stray" ] || add_note "warning: the job left untracked files in the tree: $(echo $stray)"
}

# The perf store's scale targets, on both engines: 10 000 runs of
# synthetic history (suites/perf_gen.c), then the medians of `xo perf compare`
# (< 1 s) and `xo perf report` (< 60 s); PostgreSQL on a throwaway server
# (suites/pg_cluster.sh). docs/perf.md quotes the numbers.
stage_perf_scale() {
    local gen=$BUILD/suites/perf_gen rc=0 notes=""
    cmake --build "$BUILD" --target perf_gen -j"$XO_JOBS" >/dev/null || return 1
    sh suites/perf_scale.sh "$XO" "$gen" "$NIGHTLY_DIR/scale.sqlite" || rc=1
    notes=$(tail -n 1 "$LOGS/perf-scale.log" | sed 's/^perf_scale: //')
    XO_REQUIRE_POSTGRES=1 sh suites/pg_cluster.sh sh -c \
        'sh suites/perf_scale.sh "$1" "$2" "$XO_TEST_PG"' _ "$XO" "$gen" || rc=1
    NOTE="$notes; $(tail -n 1 "$LOGS/perf-scale.log" | sed 's/^perf_scale: //')"
    rm -f "$NIGHTLY_DIR/scale.sqlite"*
    return $rc
}


# Planted slowdowns (ci/planted_check.sh): a slowdown planted in one kind of
# file that builds a kernel must be SLOWER in compare, continuous, bisect and
# detect, and the docs-only and tests-only commits around it never blamed.
# One kind a night in turn (.c, .inc, .cl, a CMake flag, .h, ops.def, then
# .c again on day 6), every kind in a full run; the table (kind x tool x
# verdict) is in planted.txt.
stage_planted() {
    local kinds=(c inc cl flag h opsdef c) rc
    local pick=${kinds[$DAY]}
    [ "$FULL" = 1 ] && pick="c inc cl flag h opsdef"
    PLANTED_KINDS=$pick bash ci/planted_check.sh "$NIGHTLY_DIR/planted.txt"
    rc=$?
    NOTE="kinds: $pick; $(tail -n 1 "$LOGS/planted.log")"
    return $rc
}

# Detect at fleet size (suites/perf_detect_scale.sh): 100 000 runs of
# synthetic history, a full detect (target < 30 s) and the incremental one
# after a new run; SQLite every night, PostgreSQL (a throwaway server) in a
# full run, where generating the history alone takes minutes.
stage_detect_scale() {
    local gen=$BUILD/suites/perf_gen rc=0 notes
    cmake --build "$BUILD" --target perf_gen -j"$XO_JOBS" >/dev/null || return 1
    sh suites/perf_detect_scale.sh "$XO" "$gen" "$NIGHTLY_DIR/detect-scale.sqlite" || rc=1
    notes=$(tail -n 1 "$LOGS/detect-scale.log" | sed 's/^perf_detect_scale: //')
    rm -f "$NIGHTLY_DIR/detect-scale.sqlite"*
    if [ "$FULL" = 1 ]; then
        XO_REQUIRE_POSTGRES=1 sh suites/pg_cluster.sh sh -c \
            'sh suites/perf_detect_scale.sh "$1" "$2" "$XO_TEST_PG"' _ "$XO" "$gen" || rc=1
        notes="$notes; $(tail -n 1 "$LOGS/detect-scale.log" | sed 's/^perf_detect_scale: //')"
    fi
    NOTE=$notes
    return $rc
}

# The sanitizer pass over every quick test, the few that ci/test.sh's
# leaves out among them (ci/lib.sh XO_ASAN_CI_EXCLUDE), with the Keras venv
# and a PostgreSQL server required as in CI.
stage_asan() {
    local py
    py=$(xo_keras_python) || {
        NOTE="cannot make the Keras venv (ci/lib.sh xo_keras_python)"
        return 1
    }
    xo_ccache_setup >/dev/null || return 1
    XO_KERAS_PYTHON=$py XO_REQUIRE_POSTGRES=1 XO_ASAN_ALL=1 stage_asan_build &&
        XO_KERAS_PYTHON=$py XO_REQUIRE_POSTGRES=1 XO_ASAN_ALL=1 stage_asan_test
}

# Fuzzing (docs/fuzzing.md): the clang build, then each target for
# XO_FUZZ_SECONDS (30 on its night; 120 in a full run; 600 for the
# 10-minute run).
nightly_fuzz() {
    local secs=30
    [ "$FULL" = 1 ] && secs=120
    stage_fuzz_build && XO_FUZZ_SECONDS=${XO_FUZZ_SECONDS:-$secs} stage_fuzz
}

# The function of stage NAME.
stage_function() {
    case $1 in
    fuzz) echo nightly_fuzz ;;
    *) echo "stage_${1//-/_}" ;;
    esac
}

# A stage's own process (this script again with --run-stage NAME): the
# stage's function, its NOTE left in logs/NAME.note for the summary line.
# (--bench-note LOG prints the bench stage's note of a log, for its test.)
if [ "${1:-}" = --bench-note ]; then
    bench_note "$2"
    exit
fi
if [ "${1:-}" = --run-stage ]; then
    NOTE=""
    # the job's test of a dead stage: this process dies as a crash would
    [ "${XO_NIGHTLY_KILL:-}" = "$2" ] && kill -KILL $$
    "$(stage_function "$2")"
    rc=$?
    printf '%s' "$NOTE" >"$LOGS/$2.note"
    exit $rc
fi

# summary_line NAME STATUS SECONDS NOTE: one line on the terminal and in
# logs/stages.txt (the report's fallback page and the closing note read it).
summary_line() {
    local line
    line=$(printf '%-12s %-17s %5ss  %s' "$1" "$2" "$3" "$4")
    echo "$line"
    echo "$line" >>"$LOGS/stages.txt"
}

# run_stage_budgeted NAME SECONDS: runs stage NAME in its own process with its
# output in logs/NAME.log, under what is left of the budget (less the
# report's reserve, except for the report itself); skips it, saying so, when
# its expected SECONDS do not fit or xo is missing. Returns 1 when it failed.
run_stage_budgeted() {
    local name=$1 est=$2 start left=0 rc secs note status log=$LOGS/$1.log
    local cmd=(bash "$XO_ROOT/ci/nightly.sh" --run-stage "$name")
    start=$(date +%s)
    if [ "$name" != deps ] && [ "$name" != build ] && [ "$name" != report ]; then
        if [ ! -x "$XO" ]; then
            summary_line "$name" SKIP 0 "skipped: no $XO (the build failed or did not run)"
            return 0
        fi
        if [ "$BUILD_FAILED" = 1 ]; then
            # an xo of an older build would be measured as this commit's
            summary_line "$name" SKIP 0 "skipped: the build failed ($XO is an older build's)"
            return 0
        fi
    fi
    if [ "$BUDGET" -gt 0 ]; then
        left=$((JOB_START + BUDGET - start))
        if [ "$name" = report ]; then
            [ $left -ge "$REPORT_RESERVE" ] || left=$REPORT_RESERVE
        else
            left=$((left - REPORT_RESERVE))
            [ $left -ge 0 ] || left=0
            if [ $left -lt "$est" ]; then
                summary_line "$name" SKIP 0 "skipped: ${left}s of the budget left, the stage takes ~${est}s (XO_NIGHTLY_BUDGET=$BUDGET)"
                return 0
            fi
        fi
        # (env execs timeout: the same process; a stage may size itself by it)
        cmd=(env XO_NIGHTLY_STAGE_LEFT="$left" timeout -k 10 "$left" "${cmd[@]}")
    fi
    rm -f "$LOGS/$name.note"
    # (the braces keep bash's own "Killed" line off the terminal: the
    # summary line says it)
    if [ $left -gt 0 ]; then
        # timeout runs the stage in a process group of its own, which a ^C
        # on the terminal does not reach: the trap passes it on
        { "${cmd[@]}" </dev/null >"$log" 2>&1 & } 2>/dev/null
        STAGE_PID=$!
        { wait "$STAGE_PID"; } 2>/dev/null
        rc=$?
        STAGE_PID=""
    else
        { "${cmd[@]}" </dev/null >"$log" 2>&1; } 2>/dev/null
        rc=$?
    fi
    secs=$(($(date +%s) - start))
    note=$(cat "$LOGS/$name.note" 2>/dev/null)
    [ -n "$note" ] || note=$(tail -n 1 "$log" 2>/dev/null)
    if [ $rc -eq 0 ]; then
        status=PASS
    elif [ $left -gt 0 ] && [ $secs -ge $left ] && { [ $rc -eq 124 ] || [ $rc -eq 137 ]; }; then
        status="STOPPED (budget)"
        note="stopped after ${left}s, the budget's end${note:+; $note}"
    elif [ $rc -gt 128 ]; then
        status="FAIL (signal $((rc - 128)))"
        note="killed by signal $((rc - 128))${note:+; $note}"
    else
        status="FAIL (exit $rc)"
    fi
    summary_line "$name" "$status" "$secs" "$note  (log: $log)"
    [ $rc -eq 0 ]
}

# True when stage NAME is to run tonight: XO_NIGHTLY_STAGES (when set) names
# it, and it runs every night, tonight is its day, or the run is full.
stage_tonight() {
    local name=$1 when=$2
    if [ -n "${XO_NIGHTLY_STAGES:-}" ]; then
        [[ ",$XO_NIGHTLY_STAGES," == *",$name,"* ]] || return 1
    fi
    [ "$FULL" = 1 ] || [ "$when" = every ] || [ "$when" = "$DAY" ]
}

# The answer, last on the terminal: the advice per model and workload (which
# device is faster at which batch), the alarms with their verdicts, where the
# report is.
print_answer() {
    local advise=$NIGHTLY_DIR/advise.txt log=$LOGS/detect.log rows
    echo
    echo "== the answer ($([ -f "$DB" ] && echo "xo perf advise on $DB" || echo "no store"))"
    if [ -s "$advise" ]; then
        # the advice's sentences (the per-batch tables are in advise.txt)
        grep -E '^(no GPU here|[^ ].*: crossover:)' "$advise" | awk '!seen[$0]++' | grep . ||
            head -n 3 "$advise"
    else
        echo "no advice: the report stage did not run xo perf advise (its line above says why)"
    fi
    echo "== alarms (xo perf detect)"
    if [ -s "$log" ] && grep -q '^detect:' "$log"; then
        rows=$(awk '$1 ~ /^[0-9]+$/ && NF >= 6' "$log")
        if [ -n "$rows" ]; then
            grep -m 1 -E '^ *id +state' "$log"
            echo "$rows"
        else
            echo "none"
        fi
        grep '^detect:' "$log" | tail -n 1
    else
        echo "no detection: the detect stage did not run (its line above says why)"
    fi
    if [ -f "$NOTES_FILE" ]; then
        echo "== notes"
        cat "$NOTES_FILE"
    fi
    echo "== report: $REPORT/index.html (stage lines: $LOGS/stages.txt)"
}

STAGE_PID=""
exec 3>&2 # the trap may run inside a redirection of stderr
trap '[ -n "$STAGE_PID" ] && kill -TERM "$STAGE_PID" 2>/dev/null; echo "nightly: interrupted" >&3; exit 130' INT TERM
JOB_START=$(date +%s)
BUDGET=${XO_NIGHTLY_BUDGET:-1200}
[ "$FULL" = 1 ] && BUDGET=${XO_NIGHTLY_BUDGET:-0}
[[ $BUDGET =~ ^[0-9]+$ ]] || { echo "nightly: XO_NIGHTLY_BUDGET '$BUDGET' is not a number of seconds" >&2; exit 2; }
[[ $REPORT_RESERVE =~ ^[0-9]+$ ]] || { echo "nightly: XO_NIGHTLY_RESERVE '$REPORT_RESERVE' is not a number of seconds" >&2; exit 2; }
[[ $DAY =~ ^[0-6]$ ]] || { echo "nightly: XO_NIGHTLY_DAY '$DAY' is not 0-6" >&2; exit 2; }
stages=${XO_NIGHTLY_STAGES:-}
for name in ${stages//,/ }; do
    [ "$name" = report ] || grep -q "^$name " <<<"$(printf '%s\n' "${NIGHTLY_STAGES[@]}")" || {
        echo "nightly: XO_NIGHTLY_STAGES: no stage '$name' (stages: $(printf '%s\n' "${NIGHTLY_STAGES[@]}" | awk '!s[$1]++ {printf "%s ", $1}')report)" >&2
        exit 2
    }
done
rm -f "$NOTES_FILE" "$LOGS/stages.txt"
UNTRACKED_BEFORE=$LOGS/untracked-before.txt
git -C "$XO_ROOT" status --porcelain --untracked-files=all 2>/dev/null | grep '^??' >"$UNTRACKED_BEFORE"
echo "nightly: everything goes to $NIGHTLY_DIR (one line per stage; full logs in $LOGS)"
if [ "$FULL" = 1 ]; then
    echo "nightly: the full (weekly) run: every stage, every test whole, budget ${BUDGET}s (0: none)"
else
    echo "nightly: rotation day $DAY of 0-6 (long tests shard $DAY/7; XO_NIGHTLY_FULL=1 runs all), budget ${BUDGET}s"
fi
rc=0
BUILD_FAILED=0
ran=" "
for entry in "${NIGHTLY_STAGES[@]}"; do
    read -r name when est <<<"$entry"
    stage_tonight "$name" "$when" && [[ $ran != *" $name "* ]] || continue
    ran="$ran$name "
    if ! run_stage_budgeted "$name" "$est"; then
        rc=1
        [ "$name" = build ] && BUILD_FAILED=1
    fi
done
run_stage_budgeted report 60 || rc=1
check_tree_clean
print_answer
exit $rc
