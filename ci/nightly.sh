#!/usr/bin/env bash
# ci/nightly.sh - the nightly perf job (README): install what is missing, build
# Release (build-release/), run the quick (and nightly, when present) suites,
# run the seed experiment on every device, record the perf set into
# perf.sqlite, time the PyTorch peer when python3 + torch are there, run the
# cpu benchmark beside it (scripts/bench_vs_pytorch.py), run a sample of
# the mutation stage (ci/mutate.sh), detect changes over the history, draw
# the report, and say where it is and what regressed. Every stage is a
# function with one summary line (STYLE rule 17).
#
# Environment:
#   XO_NIGHTLY_DIR   where perf.sqlite, report/, seed.txt and seed.json go (repo root)
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
NIGHTLY_DIR=${XO_NIGHTLY_DIR:-$XO_ROOT}
DB=$NIGHTLY_DIR/perf.sqlite
REPORT=$NIGHTLY_DIR/report
XO=$XO_ROOT/build-release/cli/xo
NOTES=()   # one line per stage result worth repeating at the end

stage_build() {
    local log=build-release/build.log
    mkdir -p build-release
    cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DXO_WERROR=ON >$log 2>&1 &&
        cmake --build build-release -j"$XO_JOBS" >>$log 2>&1
    local rc=$?
    [ $rc -eq 0 ] && echo "build: build-release/ (log: $log)" || tail -n 40 $log
    return $rc
}

stage_test() {
    local rc=0
    ctest --test-dir build-release -L quick -j"$XO_JOBS" --timeout 600 || rc=1
    if ctest --test-dir build-release -N -L nightly 2>/dev/null | grep -q 'Total Tests: [1-9]'; then
        ctest --test-dir build-release -L nightly -LE quick -j"$XO_JOBS" --timeout 1800 || rc=1
    else
        echo "test: no tests labelled nightly"
    fi
    return $rc
}

stage_seed() {
    # The question the project exists for, first: the seed experiment on every
    # device, shown as it runs (stderr), its JSON kept for scripts.
    mkdir -p "$NIGHTLY_DIR"
    "$XO" seed --json >"$NIGHTLY_DIR/seed.json" 2> >(tee "$NIGHTLY_DIR/seed.txt" >&2)
    local rc=$?
    NOTES+=("seed: $NIGHTLY_DIR/seed.txt, $NIGHTLY_DIR/seed.json")
    return $rc
}

stage_record() {
    local args=(--db "$DB" --no-progress)
    [ "${XO_NIGHTLY_QUICK:-0}" = 1 ] && args+=(--quick)
    "$XO" perf record "${args[@]}" | tee "$NIGHTLY_DIR/record.log"
    local rc=$?
    NOTES+=("record: $(tail -n 1 "$NIGHTLY_DIR/record.log" 2>/dev/null)")
    return $rc
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
        echo "peer: skipped: no python3 with PyTorch (apt-get install python3-torch)"
        NOTES+=("peer: skipped (no PyTorch)")
        return 0
    fi
    local args=(--xo "$XO" --db "$DB")
    [ "${XO_NIGHTLY_QUICK:-0}" = 1 ] && args+=(--quick)
    "$py" scripts/peer_store.py "${args[@]}"
    local rc=$?
    NOTES+=("peer: pytorch-cpu $([ $rc -eq 0 ] && echo stored || echo "failed (exit $rc)")")
    return $rc
}

# The cpu backend's benchmark beside PyTorch's CPU build, in alternating
# rounds (issue 4's targets: predict 4000 <= 1 ms, epoch <= 10 ms, >= 10x).
stage_bench() {
    local py
    if ! py=$(find_torch_python); then
        "$XO" bench --repeat 9 | tee "$NIGHTLY_DIR/bench.txt" || return 1
        NOTES+=("bench: $NIGHTLY_DIR/bench.txt (no PyTorch: no side-by-side ratio)")
        return 0
    fi
    local args=(--xo "$XO" --rounds 3 --repeat 5)
    [ "${XO_NIGHTLY_QUICK:-0}" = 1 ] && args=(--xo "$XO" --rounds 1 --repeat 3)
    "$py" scripts/bench_vs_pytorch.py "${args[@]}" | tee "$NIGHTLY_DIR/bench.txt"
    local rc=$?
    NOTES+=("bench: $NIGHTLY_DIR/bench.txt")
    while read -r line; do
        NOTES+=("  $line")
    done < <(grep -E '^(predict|one epoch)' "$NIGHTLY_DIR/bench.txt")
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

# exit 1 from detect = a confirmed regression: the stage fails, the job goes on
stage_detect() {
    "$XO" perf detect --db "$DB" >"$NIGHTLY_DIR/detect.log"
    local rc=$?
    tail -n 1 "$NIGHTLY_DIR/detect.log"
    if [ $rc -eq 1 ]; then
        NOTES+=("detect: REGRESSIONS confirmed:")
        while read -r line; do
            NOTES+=("  $line")
        done < <(awk '$2 == "confirmed" && $3 == "regression"' "$NIGHTLY_DIR/detect.log")
    else
        NOTES+=("detect: $(tail -n 1 "$NIGHTLY_DIR/detect.log")")
    fi
    return $rc
}

stage_report() {
    "$XO" perf report --db "$DB" --out "$REPORT" || return 1
    "$XO" perf advise --db "$DB" | tee "$NIGHTLY_DIR/advise.txt"
    NOTES+=("report: $REPORT/index.html")
    return 0
}

rc=0
run_stage deps stage_deps || { print_summary; exit 1; }
run_stage build stage_build || { print_summary; exit 1; }
run_stage seed stage_seed || rc=1
run_stage test stage_test || rc=1
run_stage record stage_record || rc=1
run_stage peer stage_peer || rc=1
run_stage bench stage_bench || rc=1
run_stage mutate stage_mutate || rc=1
if [ -f "$DB" ]; then
    run_stage detect stage_detect || rc=1
    run_stage report stage_report || rc=1
fi
print_summary
echo
echo "==== nightly results ($NIGHTLY_DIR)"
echo "database: $DB"
for line in "${NOTES[@]}"; do
    echo "$line"
done
exit $rc
