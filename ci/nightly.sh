#!/usr/bin/env bash
# ci/nightly.sh - the nightly perf job (README): install what is missing, build
# Release (build-release/), run the quick (and nightly, when present) suites,
# run the seed experiment on every device, `xo explain` against the cost model,
# record the perf set, time the
# PyTorch peer when python3 + torch are there, run the cpu benchmark beside it
# (scripts/bench_vs_pytorch.py), run a sample of the mutation stage
# (ci/mutate.sh) and the fuzz targets (fuzz/run.sh), detect changes over the history, draw the
# report, and say where it is and what regressed.
#
# Every stage is a function; the terminal gets one summary line per stage
# (STYLE rule 17) and the stage's full output goes to a log file. Everything
# the job writes lands in one ignored folder, out/nightly/ (the store
# perf.sqlite, report/, logs/, seed.json, ...), so the tree is left without
# untracked files (issue 16 item 11).
#
# Environment:
#   XO_NIGHTLY_DIR   where everything goes (default out/nightly under the repository)
#   XO_NIGHTLY_QUICK=1   `xo perf record --quick` (a 2-minute smoke run)
#   XO_MUTATE_SAMPLE  mutants the mutation stage runs (6; 0 skips the stage;
#                    `bash ci/mutate.sh --all` runs the whole list)
#   XO_JOBS          build/test parallelism (nproc)
# Exit: 0 all stages passed and no regression confirmed; 1 otherwise.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$XO_ROOT"

export XO_REQUIRE_OPENCL=${XO_REQUIRE_OPENCL:-1}
export CTEST_OUTPUT_ON_FAILURE=1
NIGHTLY_DIR=${XO_NIGHTLY_DIR:-$XO_ROOT/out/nightly}
LOGS=$NIGHTLY_DIR/logs
DB=$NIGHTLY_DIR/perf.sqlite
REPORT=$NIGHTLY_DIR/report
XO=$XO_ROOT/build-release/cli/xo
NOTES=()   # lines worth repeating at the end (regressions, load warnings)
NOTE=""    # what the running stage has to say in its summary line
mkdir -p "$LOGS" || exit 1

# stage NAME FUNCTION: runs it with all its output in $LOGS/NAME.log and prints
# one line: name, PASS/FAIL, seconds, the stage's NOTE (default: the log's
# last line) and the log's path.
stage() {
    local name=$1 fn=$2 start rc secs line log=$LOGS/$1.log
    NOTE=""
    start=$(date +%s)
    "$fn" >"$log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    [ -n "$NOTE" ] || NOTE=$(tail -n 1 "$log" 2>/dev/null)
    line=$(printf '%-7s %s %5ss  %s  (log: %s)' "$name" \
        "$([ $rc -eq 0 ] && echo PASS || echo "FAIL (exit $rc)")" "$secs" "$NOTE" "$log")
    echo "$line"
    XO_SUMMARY+=("$line")
    return $rc
}

stage_build() {
    cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DXO_WERROR=ON &&
        cmake --build build-release -j"$XO_JOBS"
    local rc=$?
    NOTE="build-release/"
    return $rc
}

stage_test() {
    local rc=0
    ctest --test-dir build-release -L quick -j"$XO_JOBS" --timeout 600 || rc=1
    NOTE="quick: $(grep -E 'tests passed' "$LOGS/test.log" | tail -n 1)"
    if ctest --test-dir build-release -N -L nightly 2>/dev/null | grep -q 'Total Tests: [1-9]'; then
        ctest --test-dir build-release -L nightly -LE quick -j"$XO_JOBS" --timeout 1800 || rc=1
        NOTE="$NOTE; nightly: $(grep -E 'tests passed' "$LOGS/test.log" | tail -n 1)"
    else
        NOTE="$NOTE; no tests labelled nightly"
    fi
    return $rc
}

# Keras itself loads the files xo writes (issue 13 item 1): a venv with Keras 3
# + JAX on the CPU (made once, kept in $NIGHTLY_DIR/kvenv), then the
# keras.load_in_keras test with it, which must run, not skip.
stage_keras() {
    local venv=$NIGHTLY_DIR/kvenv out
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import keras, jax, h5py' 2>/dev/null; then
        python3 -m venv "$venv" && "$venv/bin/pip" install -q numpy keras jax h5py || {
            NOTE="cannot make the Keras venv (pip install numpy keras jax h5py failed)"
            return 1
        }
    fi
    out=$(XO_KERAS_PYTHON=$venv/bin/python ctest --test-dir build-release -R '^keras\.load_in_keras$' -V 2>&1)
    echo "$out"
    if ! grep -q 'keras.load_in_keras .*Passed' <<<"$out"; then
        NOTE="Keras did not load xo's files (or the test skipped)"
        return 1
    fi
    NOTE="Keras $("$venv/bin/python" -c 'import keras; print(keras.__version__)' 2>/dev/null) loads xo's .keras and .weights.h5: $(grep -o 'max |Keras - xo| [0-9.e-]*' <<<"$out" | head -1)"
}

stage_seed() {
    # The question the project exists for, first: the seed experiment on every
    # device (its table in the log), its JSON kept for scripts.
    "$XO" seed --json >"$NIGHTLY_DIR/seed.json"
    local rc=$?
    NOTE="$NIGHTLY_DIR/seed.json"
    return $rc
}

stage_explain() {
    # issue 12: the cost model against the measurement (seed model, cpu and
    # cl, batch 1..8192): the fraction of points predicted within 2x and of
    # dominant costs named as measured; a benchmark, so it reports, it does
    # not fail on the target (suites/cli/explain_accuracy.py --require would).
    python3 suites/cli/explain_accuracy.py "$XO" --json "$NIGHTLY_DIR/explain.json"
    local rc=$?
    NOTE=$(tail -n 1 "$LOGS/explain.log")
    return $rc
}

# Both metrics (issue 14 item 3): the times, then every ref and cpu benchmark's
# instructions under callgrind (without valgrind: the times alone, said so).
stage_record() {
    local args=(--db "$DB" --no-progress)
    [ "${XO_NIGHTLY_QUICK:-0}" = 1 ] && args+=(--quick)
    if command -v valgrind >/dev/null; then
        args+=(--metric time,instructions)
    else
        echo "record: no valgrind: times only (install valgrind for instruction counts)"
    fi
    "$XO" perf record "${args[@]}"
    return $?
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

# The issue 13 speed targets: the zoo of five Keras models (scripts/zoo.py),
# xo cpu beside the JAX peer (scripts/peer_jax.py, jit over the whole step),
# with the venv stage_keras made; the table in the log, the figures in
# zoo.json. Targets missed are reported, not failed; a crash fails the stage.
stage_zoo() {
    local py=$NIGHTLY_DIR/kvenv/bin/python
    if ! "$py" -c 'import keras, jax' 2>/dev/null; then
        NOTE="skipped: no Keras + JAX venv (the keras stage makes it)"
        return 0
    fi
    KERAS_BACKEND=jax PYTHONDONTWRITEBYTECODE=1 "$py" scripts/zoo.py --xo "$XO" \
        --json "$NIGHTLY_DIR/zoo.json" || return 1
    NOTE="$(grep -E '^3x target' "$LOGS/zoo.log"); $NIGHTLY_DIR/zoo.json"
}

# The cpu backend's benchmark beside PyTorch's CPU build, in alternating
# rounds (issue 4's targets: predict 4000 <= 1 ms, epoch <= 10 ms, >= 10x).
stage_bench() {
    local py
    if ! py=$(find_torch_python); then
        "$XO" bench --repeat 9 || return 1
        NOTE="no PyTorch: no side-by-side ratio"
        return 0
    fi
    local args=(--xo "$XO" --rounds 3 --repeat 5)
    [ "${XO_NIGHTLY_QUICK:-0}" = 1 ] && args=(--xo "$XO" --rounds 1 --repeat 3)
    PYTHONDONTWRITEBYTECODE=1 "$py" scripts/bench_vs_pytorch.py "${args[@]}"
    local rc=$?
    NOTE=$(grep -E '^(predict|one epoch)' "$LOGS/bench.log" | paste -sd ';' -)
    return $rc
}

# The suites' power (issue 10, docs/mutation.md): a sample of the mutants,
# a window that moves every night so the whole list comes round, against
# what CI runs; the figure goes to mutation.txt and the store. A missed
# mutant fails the stage (exit 1), as a confirmed regression does.
stage_mutate() {
    local n=${XO_MUTATE_SAMPLE:-6}
    if [ "$n" = 0 ]; then
        echo "mutate: skipped (XO_MUTATE_SAMPLE=0)"
        return 0
    fi
    local args=(--sample "$n" --keep-going --out "$NIGHTLY_DIR")
    [ -f "$DB" ] && args+=(--db "$DB")
    bash ci/mutate.sh "${args[@]}"
    local rc=$?
    NOTES+=("mutation: $(head -n 1 "$NIGHTLY_DIR/mutation.txt" 2>/dev/null || echo "no result (exit $rc)")")
    return $rc
}

# exit 1 from detect = a confirmed regression of a backend under test (ref and
# peers are listed apart and never alarms): the stage fails, the job goes on.
# The load warning (other processes busy during the runs around a change) is
# repeated at the end, as compare prints it.
stage_detect() {
    "$XO" perf detect --db "$DB"
    local rc=$? line log=$LOGS/detect.log
    NOTE=$(tail -n 1 "$log" | sed 's/^detect: //')
    if [ $rc -eq 1 ]; then
        NOTES+=("detect: REGRESSIONS confirmed:")
        while read -r line; do
            NOTES+=("  $line")
        done < <(awk '$2 == "confirmed" && $3 == "regression" && !/not an alarm/' "$log")
    fi
    while read -r line; do
        NOTES+=("detect: $line")
    done < <(grep '^warning:' "$log")
    "$XO" perf detect --db "$DB" --json >"$NIGHTLY_DIR/detect.json" 2>/dev/null
    return $rc
}

stage_report() {
    "$XO" perf report --db "$DB" --out "$REPORT" || return 1
    "$XO" perf advise --db "$DB" >"$NIGHTLY_DIR/advise.txt" || return 1
    cat "$NIGHTLY_DIR/advise.txt"
    NOTE="$REPORT/index.html, $NIGHTLY_DIR/advise.txt"
    return 0
}

# Issue 14 item 2 end to end: `xo perf bisect` on a planted history
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

# Issue 14 item 3 end to end: instruction counts as a metric, in a store of
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
    [ -z "$stray" ] || NOTES+=("warning: the job left untracked files in the tree: $(echo $stray)")
}

UNTRACKED_BEFORE=$LOGS/untracked-before.txt
git -C "$XO_ROOT" status --porcelain --untracked-files=all 2>/dev/null | grep '^??' >"$UNTRACKED_BEFORE"
echo "nightly: everything goes to $NIGHTLY_DIR (one line per stage; full logs in $LOGS)"
rc=0
# Issue 14's scale targets for the perf store, on both engines: 10 000 runs of
# synthetic history (suites/perf_gen.c), then the medians of `xo perf compare`
# (< 1 s) and `xo perf report` (< 60 s); PostgreSQL on a throwaway server
# (suites/pg_cluster.sh). docs/perf.md quotes the numbers.
stage_perf_scale() {
    local gen=$XO_ROOT/build-release/suites/perf_gen rc=0 notes=""
    cmake --build build-release --target perf_gen -j"$XO_JOBS" >/dev/null || return 1
    sh suites/perf_scale.sh "$XO" "$gen" "$NIGHTLY_DIR/scale.sqlite" || rc=1
    notes=$(tail -n 1 "$LOGS/perf-scale.log" | sed 's/^perf_scale: //')
    XO_REQUIRE_POSTGRES=1 sh suites/pg_cluster.sh sh -c \
        'sh suites/perf_scale.sh "$1" "$2" "$XO_TEST_PG"' _ "$XO" "$gen" || rc=1
    NOTE="$notes; $(tail -n 1 "$LOGS/perf-scale.log" | sed 's/^perf_scale: //')"
    rm -f "$NIGHTLY_DIR/scale.sqlite"*
    return $rc
}

stage deps stage_deps || exit 1
stage build stage_build || exit 1
stage seed stage_seed || rc=1
stage explain stage_explain || rc=1
stage test stage_test || rc=1
stage keras stage_keras || rc=1
stage record stage_record || rc=1
stage peer stage_peer || rc=1
stage bench stage_bench || rc=1
stage zoo stage_zoo || rc=1
stage mutate stage_mutate || rc=1
stage bisect stage_bisect || rc=1
stage perf-scale stage_perf_scale || rc=1
stage instructions stage_instructions || rc=1
# fuzzing, 2 minutes per target (XO_FUZZ_SECONDS=600 for the 10-minute run, docs/fuzzing.md)
stage fuzz-build stage_fuzz_build && XO_FUZZ_SECONDS=${XO_FUZZ_SECONDS:-120} stage fuzz stage_fuzz || rc=1
if [ -f "$DB" ]; then
    stage detect stage_detect || rc=1
    stage report stage_report || rc=1
fi
check_tree_clean
if [ ${#NOTES[@]} -gt 0 ]; then
    echo
    for line in "${NOTES[@]}"; do
        echo "$line"
    done
fi
exit $rc
