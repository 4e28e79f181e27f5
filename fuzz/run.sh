#!/usr/bin/env bash
# fuzz/run.sh [TARGET...] - runs the libFuzzer targets (docs/fuzzing.md) built
# by `-DXO_FUZZ=ON` with clang in $XO_FUZZ_BUILD (default build-fuzz/), each
# for $XO_FUZZ_SECONDS (default 60), one after the other, ASan + UBSan with
# leak detection, allocator_may_return_null=1 (a failed malloc must reach the
# code's own error path). Seeds are the repository's own valid files, copied
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

rc=0
summary=()
for t in "${targets[@]}"; do
    bin=$build/fuzz/xo_fuzz_$t
    if [ ! -x "$bin" ]; then
        echo "fuzz: $bin missing: configure with CC=clang -DXO_FUZZ=ON and build xo_fuzz_targets" >&2
        exit 2
    fi
    corpus=$out/corpus/$t
    art=$out/artifacts/$t
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
    log=$out/$t.log
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
    summary+=("$line")
    echo "fuzz: $line"
    if [ $trc -ne 0 ] || [ "$found" -ne 0 ]; then
        rc=1
        grep -m1 -E 'ERROR: |runtime error|SUMMARY' "$log" >&2
        echo "fuzz: $t: reproducer(s) in $art:" >&2
        ls "$art" >&2
    fi
done
printf '%s\n' "${summary[@]}" >"$out/summary.txt"
exit $rc
