#!/usr/bin/env bash
# ci/sanitize.sh - only the sanitizer half of ci/test.sh: build with
# AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/) and run the quick
# suites there, OpenCL included (XO_REQUIRE_OPENCL=1), every one of them
# (ci/test.sh leaves out a few: ci/lib.sh XO_ASAN_CI_EXCLUDE).
# On a host whose OpenCL platform is NVIDIA's (clinfo -l, else the ICD files)
# the stage adds ASAN_OPTIONS protect_shadow_gap=0:replace_intrin=0 for the
# CUDA driver; suites/lsan.supp suppresses its leaks by library name;
# XO_ASAN_OPENCL=pocl hides every ICD but PoCL's from the sanitized tests
# instead (docs/opencl.md, "Sanitizers on an NVIDIA host"). The stage prints
# the environment it uses (ci/lib.sh xo_asan_env). As in ci/test.sh nothing
# may be skipped that ci/skips.tsv does not allow: the Keras venv is made (or
# reused) first and the PostgreSQL suites require a server.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$XO_ROOT"

export XO_REQUIRE_OPENCL=${XO_REQUIRE_OPENCL:-1}
export XO_REQUIRE_POSTGRES=${XO_REQUIRE_POSTGRES:-1}
export CTEST_OUTPUT_ON_FAILURE=1
XO_CTEST_COST_KEEP=1 # ctest's test times kept between jobs (ci/lib.sh xo_ctest)
# every quick test, also those ci/test.sh's pass leaves out (ci/lib.sh)
export XO_ASAN_ALL=${XO_ASAN_ALL:-1}

rc=0
run_stage deps stage_deps || { print_summary; exit 1; }
xo_ccache_setup || exit 1
run_stage keras-venv stage_keras_venv || rc=1
run_stage asan-build stage_asan_build || rc=1
[ $rc -eq 0 ] && { run_stage asan-test stage_asan_test || rc=1; }
print_summary
exit $rc
