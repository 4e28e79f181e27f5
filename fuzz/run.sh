#!/usr/bin/env bash
# fuzz/run.sh [TARGET...] - runs the libFuzzer targets (docs/fuzzing.md) built
# by `-DXO_FUZZ=ON` with clang in $XO_FUZZ_BUILD (default build-fuzz/), each
# for $XO_FUZZ_SECONDS (default 60), $XO_FUZZ_JOBS at a time (default the
# core count), ASan + UBSan with leak detection, allocator_may_return_null=1
# (a failed malloc must reach the code's own error path). Seeds are the repository's own valid files, copied
# into a fresh corpus at run time. Any crash, leak, timeout, out-of-memory or
# UB report fails the run and leaves its reproducer in
# $XO_FUZZ_OUT/artifacts/<target>/ (default build-fuzz/fuzz-out/); to keep it
# as a regression test, copy it to fuzz/regress/<target>/ once fixed.
# Prints one line per target: executions, coverage, corpus, findings.
set -u -o pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${XO_FUZZ_BUILD:-$root/build-fuzz}
secs=${XO_FUZZ_SECONDS:-60}
out=${XO_FUZZ_OUT:-$build/fuzz-out}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(spec npy case import keras_config keras_h5 keras_weights keras_zip)

# seed_files TARGET: the repository's valid inputs of that kind
seed_files() {
    case $1 in
    spec) ls "$root"/models/*.model "$root"/suites/golden/*/*.model ;;
    npy) ls "$root"/suites/golden/*/*.npy "$root"/suites/golden/*/weights/*.npy ;;
    case) ls "$root"/suites/shapes/*.txt ;;
    import) ls "$root"/fuzz/regress/import/seed-*.json ;;
    keras_config) ls "$root"/fuzz/regress/keras_config/seed-*.json ;;
    # whole files (through the isolated reader): every fixture of that kind
    keras_h5) ls "$root"/suites/golden/keras/{seed,cnn2d}.h5 "$root"/suites/golden/*/model.h5 ;;
    keras_weights) ls "$root"/suites/golden/keras/*weights.h5 ;;
    keras_zip) ls "$root"/suites/golden/keras/*.keras "$root"/suites/golden/*/model.keras ;;
    esac
}

for t in "${targets[@]}"; do
    if [ ! -x "$build/fuzz/xo_fuzz_$t" ]; then
        echo "fuzz: $build/fuzz/xo_fuzz_$t missing: configure with CC=clang -DXO_FUZZ=ON and build xo_fuzz_targets" >&2
        exit 2
    fi
done

# run_target TARGET: one target's fresh corpus, its run, and its one-line
# result in $out/TARGET.line; exit status 1 on a finding.
run_target() {
    local t=$1 bin=$build/fuzz/xo_fuzz_$1 corpus=$out/corpus/$1 art=$out/artifacts/$1
    local log=$out/$1.log trc execs cov ft corp found line
    rm -rf "$corpus" "$art"
    mkdir -p "$corpus" "$art"
    # shapes files are split into a few lines per seed: short inputs mutate better
    while read -r f; do
        if [ "$t" = case ]; then
            split -l 4 -a 4 "$f" "$corpus/$(basename "$f" .txt)-"
        else
            cp "$f" "$corpus/"
        fi
    done < <(seed_files "$t")
    cp "$root"/fuzz/regress/"$t"/* "$corpus/" 2>/dev/null
    echo "fuzz: $t for ${secs}s, $(ls "$corpus" | wc -l) seeds, log $log"
    ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1:abort_on_error=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$art/" "$corpus" >"$log" 2>&1
    trc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    corp=$(ls "$corpus" | wc -l)
    found=$(ls "$art" | wc -l)
    line=$(printf '%-7s %s  execs %s  cov %s  ft %s  corpus %s  findings %s' "$t" \
        "$([ $trc -eq 0 ] && [ "$found" -eq 0 ] && echo PASS || echo FAIL)" \
        "${execs:-?}" "${cov:-?}" "${ft:-?}" "$corp" "$found")
    echo "$line" >"$out/$t.line"
    echo "fuzz: $line"
    if [ $trc -ne 0 ] || [ "$found" -ne 0 ]; then
        grep -m1 -E 'ERROR: |runtime error|SUMMARY' "$log" >&2
        echo "fuzz: $t: reproducer(s) in $art:" >&2
        ls "$art" >&2
        return 1
    fi
}

# A libFuzzer process uses one core: $XO_FUZZ_JOBS targets (default the
# core count, XO_JOBS) run side by side, each for its full $XO_FUZZ_SECONDS,
# so the stage takes about ceil(targets / jobs) * seconds instead of
# targets * seconds with the same fuzzing per target.
jobs=${XO_FUZZ_JOBS:-${XO_JOBS:-$(nproc 2>/dev/null || echo 1)}}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: XO_FUZZ_JOBS must be a count >= 1" >&2; exit 2; }
mkdir -p "$out"
rc=0
running=0
for t in "${targets[@]}"; do
    rm -f "$out/$t.line"
    if [ $running -ge "$jobs" ]; then
        wait -n || rc=1
        running=$((running - 1))
    fi
    run_target "$t" &
    running=$((running + 1))
done
while [ $running -gt 0 ]; do
    wait -n || rc=1
    running=$((running - 1))
done
summary=()
for t in "${targets[@]}"; do
    if [ -s "$out/$t.line" ]; then
        summary+=("$(cat "$out/$t.line")")
    else
        summary+=("$(printf '%-7s FAIL  (no result)' "$t")")
        rc=1
    fi
done
printf '%s\n' "${summary[@]}" >"$out/summary.txt"
exit $rc
