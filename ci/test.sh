#!/usr/bin/env bash
# ci/test.sh - the test command (README): install what is missing, make (or
# reuse) the cached Keras venv, build with warnings as errors, run the quick
# suites that need the plain build (ci/lib.sh XO_PLAIN_CI_TESTS) and the
# OpenCL race checks (Oclgrind), check that the mutation stage's mutants
# still apply, run a sample of the mutants ci/mutgen.py makes from the
# day's change, then build again with AddressSanitizer +
# UndefinedBehaviorSanitizer and run the other quick suites there (the perf
# store's PostgreSQL suites among them, on throwaway servers), then build
# the fuzz targets with clang and run each for 3 s (docs/fuzzing.md).
# Every build compiles through ccache (ci/lib.sh xo_ccache_setup). Each
# stage's wall and CPU time is printed and, when the job ends, stored as
# perf series in $XO_CI_STORE (default ~/.cache/crossover/ci-perf.sqlite;
# empty: not stored), so `xo perf detect --db` that store tracks CI's own
# time (docs/testing.md, "CI's own time").
# No check may be skipped: OpenCL suites run on whatever platform is found
# (PoCL in CI, XO_REQUIRE_OPENCL=1), the PostgreSQL ones fail without a
# server (XO_REQUIRE_POSTGRES=1), Keras loads xo's files (XO_KERAS_PYTHON),
# and every ctest run ends with ci/skips.py: a skipped test or CMocka case
# that ci/skips.tsv does not allow for that stage fails it, and so does an
# entry there that no longer skips.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/selftest_due.sh"
cd "$XO_ROOT"

export XO_REQUIRE_OPENCL=${XO_REQUIRE_OPENCL:-1}
export XO_REQUIRE_POSTGRES=${XO_REQUIRE_POSTGRES:-1}
export CTEST_OUTPUT_ON_FAILURE=1
# The files the tests write are thrown away: no fsync (include/xo.h
# xo_output_sync). A model test's checkpoints made 4400 of them, 2-20 s of
# its wall time while the disk was busy with the build beside it.
export XO_FSYNC=${XO_FSYNC:-0}
# the suites' temporary files on a tmpfs (ci/lib.sh xo_fast_tmpdir)
xo_fast_tmpdir
echo "temporary files: ${TMPDIR:-/tmp}"
XO_CTEST_COST_KEEP=1 # ctest's test times kept between jobs (ci/lib.sh xo_ctest)

stage_build() {
    cmake -S . -B build-ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXO_WERROR=ON >build-ci.log 2>&1 &&
        cmake --build build-ci -j"$XO_JOBS" >>build-ci.log 2>&1
    local rc=$?
    [ $rc -eq 0 ] || tail -n 40 build-ci.log
    return $rc
}

stage_test() {
    local exclude='^$' selftest=0
    # the mutation tool's own suites only when due (ci/selftest_due.sh)
    if xo_mutgen_selftest_due; then
        selftest=1
        echo "test: ci.mutgen.* run: the day's change touches the mutation tool or what it uses"
    else
        exclude='^ci\.mutgen\.'
        echo "test: ci.mutgen.* not run: the day's change touches none of the files they" \
            "exercise, or their content has passed them here (ci/selftest_due.sh;" \
            "XO_MUTGEN_SELFTEST=1 runs them; so does the nightly's quick shard)"
    fi
    # the quick tests this build runs (ci/lib.sh XO_PLAIN_CI_TESTS: those
    # the sanitized pass leaves to it, and the cpu backend's numeric suites,
    # which run in both); every other one runs in asan-test only
    xo_ctest quick build-ci -L quick -R "$XO_PLAIN_CI_TESTS" -E "$exclude" \
        -j"$XO_JOBS" --timeout 300 || return 1
    if [ $selftest = 1 ]; then
        xo_mutgen_selftest_record || echo "test: the ci.mutgen.* pass not recorded"
    fi
    # The cpu backend picks its ISA once at start-up (AVX-512 here when the CPU
    # has it); run its op suites and the model suite (the fused network path
    # has per-ISA kernels too) again at each lower level it can fall back to.
    # A level equal to the one it picks here is the pass above (ci/lib.sh
    # xo_isa_fallbacks).
    local isa levels
    levels=$(xo_isa_fallbacks build-ci/cli/xo)
    for isa in "${XO_ISA_LEVELS[@]}"; do
        grep -qx "$isa" <<<"$levels" ||
            echo "test: no XO_CPU_ISA=$isa pass: the cpu backend's own level here is that or lower, which the quick pass ran"
    done
    for isa in $levels; do
        echo "test: cpu op suites and model suite with XO_CPU_ISA=$isa"
        XO_CPU_ISA=$isa xo_ctest "isa-$isa" build-ci -L quick -R "$XO_ISA_TESTS" \
            -j"$XO_JOBS" --timeout 300 || return 1
    done
}

# The mutation stage's list (docs/mutation.md) still applies to this tree:
# a stale mutant is found here, not at night. Running them is
# `bash ci/mutate.sh --all` (ci/nightly.sh runs a sample).
stage_mutants() {
    bash ci/mutate.sh --check
}

# Mutants made by ci/mutgen.py from the day's change (HEAD's first-parent
# commits within 24 h of it), a sample of XO_MUTGEN_SAMPLE (6), each against
# the tests that reach it by the newest reach map kept on this machine
# (${XO_CACHE_DIR:-~/.cache/crossover}/reach, the nightly's: this tree's, or
# an ancestor's whose survivors are confirmed on their area; --reach use: CI
# never spends minutes making one; the line says which map), else
# its area's tests and, if it lives, every pass above (docs/mutation.md,
# "Generated mutants"); one listed in ci/mutgen-equivalent.tsv is not run.
# Time-boxed after the set-up (--box-from setup): once the scratch tree is
# synced and built (~10 s from the ccache, a minute cold or under load: the
# day's change sets it), mutants stop starting after XO_MUTGEN_BUDGET (25 s)
# and one still running at XO_MUTGEN_STOP (35 s) is stopped; both are
# pending, not a failure (a mutant caught by the cheap tests that reach it
# takes 15-45 s; one whose tests start PostgreSQL servers, longer). Counting
# from the set-up's end, a large change's long build no longer leaves the
# sample no time at all; the stage's share of CI's 10 minutes is the build
# plus these 35 s (when warm, about the mutants' time the 30/45 s box from
# the start left them). The sample runs cheapest first, so the box cuts the dear
# mutants, not the cheap. The test
# and races stages
# have just passed on this tree in build-ci, so their result stands for the
# baseline (--trust-baseline). Survivors are listed (see below), errors fail.
stage_mutgen() {
    local dir=$XO_ROOT/out/mutgen-ci
    if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
        git fetch -q --deepen=50 2>/dev/null || echo "mutgen: shallow clone and no fetch"
    fi
    python3 ci/mutgen.py --since-day --per-line 1 --first "${XO_MUTGEN_SAMPLE:-6}" \
        --out "$dir" || return 1
    # a glob, not `ls | grep -q`: under pipefail grep's early exit makes ls
    # die of SIGPIPE and the pipeline false when patches are there
    if ! compgen -G "$dir/*.patch" >/dev/null; then
        echo "mutgen: the day's change has no product-code lines: no mutants to run"
        return 0
    fi
    # the sample (--offset 0) is the first XO_MUTGEN_SAMPLE patches in the
    # folder's glob order, the order ci/mutate.sh lists them in: --first
    # writes only those, so neither mutgen.py writes nor this removes the
    # thousands a day's change makes (9813 cost 14 CPU-s to write and a
    # process each to remove), and the runner reads six headers
    rm -f "$dir/result/mutgen-map.txt"
    XO_REACH_CACHE=${XO_REACH_CACHE:-${XO_CACHE_DIR:-$HOME/.cache/crossover}/reach} \
        XO_MUTATE_DIR=$XO_ROOT/build-mutgen bash ci/mutate.sh --from "$dir" \
        --sample "${XO_MUTGEN_SAMPLE:-6}" --offset 0 --budget "${XO_MUTGEN_BUDGET:-25}" \
        --stop "${XO_MUTGEN_STOP:-35}" --box-from setup --reach use --trust-baseline build-ci -j"$XO_JOBS" \
        --out "$dir/result"
    local rc=$?
    echo "mutgen: $(cat "$dir/result/mutgen-map.txt" 2>/dev/null || echo "reach map: unknown")"
    # A survivor is a finding about the suites, listed above with file:line
    # and the mutation for whoever changed those lines; which mutants the
    # sample holds moves with every commit, so it does not fail CI (the
    # nightly's mutgen stage, which runs all of the day's mutants, does).
    # A stage error (a mutant that does not apply, a kill that was not the
    # mutant's) does.
    if [ $rc = 1 ]; then
        echo "mutgen: survivors listed above (CI reports them; the nightly fails on them)"
        return 0
    fi
    return $rc
}

# The OpenCL kernels under Oclgrind: races, divergent barriers, out-of-bounds
# and uninitialized reads that PoCL cannot see (suites/races.cmake).
stage_races() {
    xo_ctest races build-ci -L races -j"$XO_JOBS" --timeout 900
}

rc=0
run_stage deps stage_deps || { print_summary; exit 1; }
xo_ccache_setup || exit 1
run_stage keras-venv stage_keras_venv || rc=1
run_stage build stage_build || rc=1
[ $rc -eq 0 ] && { run_stage test stage_test || rc=1; }
[ $rc -eq 0 ] && { run_stage races stage_races || rc=1; }
[ $rc -eq 0 ] && { run_stage mutgen stage_mutgen || rc=1; }
run_stage mutants stage_mutants || rc=1
run_stage asan-build stage_asan_build || rc=1
[ $rc -eq 0 ] && { run_stage asan-test stage_asan_test || rc=1; }
# each fuzz target XO_FUZZ_SECONDS: 3 s here, two at a time (12 s for 8
# targets, plus a few seconds' build from the cache): a smoke run that the
# targets build, start and survive their seeds and a first round of
# mutations; the depth is the nightly's (30 s a target on its night, 120 s
# in the weekly run), and every target's regression inputs replay in the
# quick suites as well
export XO_FUZZ_SECONDS=${XO_FUZZ_SECONDS:-3}
if run_stage fuzz-build stage_fuzz_build; then
    run_stage fuzz stage_fuzz || rc=1
else
    rc=1
fi
print_summary
# CI's own time as a series (docs/testing.md): a store that cannot be
# written is reported and does not fail the job, whose checks passed or not
# above.
XO_CI_STORE=${XO_CI_STORE-${XO_CACHE_DIR:-$HOME/.cache/crossover}/ci-perf.sqlite}
if [ -n "$XO_CI_STORE" ]; then
    xo_ci_times_store "$XO_ROOT/build-ci/cli/xo" "$XO_CI_STORE" || echo "ci-times: not stored (above)"
fi
exit $rc
