#!/usr/bin/env bash
# ci_selection.sh - which build runs which quick test in ci/test.sh: the
# plain test stage's regex (ci/lib.sh XO_PLAIN_CI_TESTS, the one
# stage_test passes to ctest -R) and asan-test's exclusion
# (XO_ASAN_CI_EXCLUDE|XO_WORKLOAD_TESTS), on names of each kind: the cpu
# backend's numeric suites in both builds, the input-handling, perf-store,
# reference and cl op suites sanitized only, the CI scripts, PoCL-bound
# twins and workloads plain only. A test neither selects would run nowhere.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/ci/lib.sh"
fails=0
plain() { [[ $1 =~ $XO_PLAIN_CI_TESTS ]]; }
asan() { ! [[ $1 =~ $XO_ASAN_CI_EXCLUDE|$XO_WORKLOAD_TESTS ]]; }
want() { # want NAME both|plain|asan
    local got=none
    if plain "$1" && asan "$1"; then got=both; elif plain "$1"; then got=plain; elif asan "$1"; then got=asan; fi
    [ "$got" = "$2" ] || { echo "FAILED: $1 runs in $got, want $2"; fails=$((fails + 1)); }
}
for t in ops.cpu.relu.fwd ops.cpu.conv1d.bwd.valid.t3 sweep.cpu.conv1d.fwd.same model model.t3 \
    model.fused_graphs model.cli.seed_cpu_1epoch keras gradcheck; do
    want "$t" both
done
for t in ops.ref.relu.fwd ops.cl.relu.fwd badinput.keras_bn_axis keras.hostile perfdb perfdb.pg.cli \
    perf_report explain.json untrusted_io.pg_secret fuzz.regress.npy papercuts.docs cl; do
    want "$t" asan
done
for t in ci.skips lint.layers coverage.aggregate cl.offline_gpu_compile.nvidia \
    keras.load_in_keras.seed_bn sweep.cl.conv2d.fwd.same model.cl_gpu_row papercuts.seed_ci probe; do
    want "$t" plain
done
# stage_test selects with that regex (a variable defined and never passed
# selects nothing)
grep -q -- '-R "$XO_PLAIN_CI_TESTS"' "$root/ci/test.sh" ||
    { echo "FAILED: ci/test.sh's quick pass does not select -R \"\$XO_PLAIN_CI_TESTS\""; fails=$((fails + 1)); }
[ $fails = 0 ] && echo "ci_selection: every kind runs in the build(s) it should"
exit $((fails > 0))
