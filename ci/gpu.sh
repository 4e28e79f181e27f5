#!/usr/bin/env bash
# ci/gpu.sh - one command for a machine with a GPU: installs
# what it needs, builds, runs the OpenCL suites on the GPU, the seed
# experiment, `xo probe`, `xo explain`, the model benchmarks with the batch
# sweep into a perf store and its report, and prints where the results are.
#
# Nothing may silently test the CPU instead: XO_REQUIRE_OPENCL=gpu is set for
# every stage, so the cl backend refuses a device that is not a GPU (PoCL's
# CPU device included), and before building the script stops with a one-line
# reason and exit 2 when no GPU OpenCL device is there.
#
# usage: bash ci/gpu.sh [--no-install] [--no-build] [--build-dir DIR] [--out DIR]
#   --no-install     no apt-get (the packages must be there)
#   --no-build       use DIR as built (no cmake)
#   --build-dir DIR  the build tree (default build-gpu, RelWithDebInfo)
#   --out DIR        results and one log per stage (default out/gpu)
# (relative paths are taken from the repository root)
# Environment: XO_CL_DEVICE picks among several GPUs (docs/opencl.md);
# OCL_ICD_VENDORS as the ICD loader reads it (when unset and no ICD file names
# NVIDIA's driver but its library is there, the script makes one: nvidia_icd);
# XO_JOBS build/test parallelism (nproc); XO_CLINFO the clinfo to ask
# (clinfo; a missing one leaves the check to the built xo).
# Exit: 0 every stage passed; 1 a stage failed (the others still ran);
# 2 bad usage or no GPU OpenCL device.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$XO_ROOT"

install=1
build=1
BUILD=build-gpu
OUT=out/gpu
while [ $# -gt 0 ]; do
    case $1 in
    --no-install) install=0 ;;
    --no-build) build=0 ;;
    --build-dir | --out)
        [ $# -ge 2 ] && [ -n "$2" ] || { echo "ci/gpu.sh: $1 needs a directory" >&2; exit 2; }
        if [ "$1" = --out ]; then OUT=$2; else BUILD=$2; fi
        shift
        ;;
    *) echo "ci/gpu.sh: unknown argument '$1' (see the usage at the top of ci/gpu.sh)" >&2; exit 2 ;;
    esac
    shift
done
XO=$BUILD/cli/xo
mkdir -p "$OUT" || { echo "ci/gpu.sh: cannot create $OUT" >&2; exit 2; }
OUT=$(cd "$OUT" && pwd)

export XO_REQUIRE_OPENCL=gpu
export CTEST_OUTPUT_ON_FAILURE=1
# The ICD loader (the GPU driver's OpenCL is reached through it) and clinfo.
XO_PACKAGES+=(ocl-icd-libopencl1 clinfo)

# no_gpu REASON: the one line and exit 2.
no_gpu() {
    echo "ci/gpu.sh: no GPU OpenCL device: $1" >&2
    exit 2
}

# A container often mounts NVIDIA's driver libraries but not the one-line ICD
# file naming libnvidia-opencl.so.1 (docs/opencl.md, "The driver and the ICD
# loader"): the loader then lists no NVIDIA platform. When no ICD file names
# it and the library is there, point the loader at it through a vendors
# directory of our own, unless the caller set OCL_ICD_VENDORS. XO_NVIDIA_LIB_DIRS
# (space-separated) replaces the directories searched after ldconfig's cache.
nvidia_icd() {
    local lib d
    [ -z "${OCL_ICD_VENDORS:-}" ] || return 0
    grep -qs libnvidia-opencl /etc/OpenCL/vendors/*.icd && return 0
    if [ -z "${XO_NVIDIA_LIB_DIRS:-}" ]; then
        lib=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1 / {print $NF; exit}')
    fi
    if [ -z "${lib:-}" ]; then
        for d in ${XO_NVIDIA_LIB_DIRS:-/usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64}; do
            if [ -e "$d/libnvidia-opencl.so.1" ]; then
                lib=$d/libnvidia-opencl.so.1
                break
            fi
        done
    fi
    [ -n "${lib:-}" ] || return 0
    mkdir -p "$OUT/icd" && echo "$lib" >"$OUT/icd/nvidia.icd" || return 0
    export OCL_ICD_VENDORS=$OUT/icd
    echo "gpu: no ICD file names NVIDIA's OpenCL driver; using $lib (OCL_ICD_VENDORS=$OUT/icd)"
}

# Before building: clinfo must list a device of type GPU (it is not ours, so
# it also tells a broken build apart from a missing driver).
precheck_clinfo() {
    local raw types clinfo=${XO_CLINFO:-clinfo}
    command -v "$clinfo" >/dev/null || return 0 # the check after the build decides
    raw=$("$clinfo" --raw 2>/dev/null)
    grep -q 'CL_DEVICE_TYPE[[:space:]].*CL_DEVICE_TYPE_GPU' <<<"$raw" && return 0
    types=$(paste -d' ' <(grep 'CL_DEVICE_NAME[[:space:]]' <<<"$raw" | sed -E 's/^\[[^]]*\][[:space:]]+CL_DEVICE_NAME[[:space:]]+//') \
        <(grep 'CL_DEVICE_TYPE[[:space:]]' <<<"$raw" | sed -E 's/.*CL_DEVICE_TYPE_([A-Z]+).*/(\1)/') |
        paste -sd ',' | sed 's/,/, /g')
    no_gpu "clinfo lists ${types:-no device}; install the GPU driver's OpenCL ICD (docs/opencl.md, \"On an NVIDIA GPU\")"
}

# After building: the device the cl backend chooses must be a GPU (the same
# choice every later stage makes, XO_CL_DEVICE included).
check_xo_gpu() {
    local line
    [ -x "$XO" ] || { echo "ci/gpu.sh: $XO not built (run without --no-build)" >&2; exit 2; }
    line=$("$XO" devices 2>&1 | grep -E '^cl[[:space:]]')
    case $line in
    *' available '*) echo "gpu: ${line#cl*available }" ;;
    *) no_gpu "$(sed -E 's/^cl[[:space:]]+[a-z]+[[:space:]]+//' <<<"${line:-cl: not in this build}")" ;;
    esac
}

# with_log NAME FN: FN's output goes to $OUT/NAME.log; its tail is shown on failure.
with_log() {
    local name=$1 rc
    shift
    "$@" >"$OUT/$name.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || tail -n 15 "$OUT/$name.log"
    echo "log: $OUT/$name.log"
    return $rc
}

stage_build_gpu() {
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXO_WERROR=ON &&
        cmake --build "$BUILD" -j"$XO_JOBS"
}
# The OpenCL suites on the GPU, and the model suites (every backend that
# opens, cl included: the fused network path against ref); the races label
# runs under Oclgrind's own device (ci/test.sh runs it), not the GPU's.
stage_cl_suites() {
    ctest --test-dir "$BUILD" -L 'opencl|model' -LE races -j"$XO_JOBS" --timeout 900
}
stage_seed() {
    "$XO" seed --device cl --device cpu --json >"$OUT/seed.json"
}
stage_probe() {
    "$XO" probe --json >"$OUT/probe.json"
}
stage_explain() {
    "$XO" explain --json >"$OUT/explain.json"
}
stage_record() {
    "$XO" perf record --db "$OUT/perf.db" --filter 'model/' --no-progress
}
stage_report() {
    "$XO" perf report --db "$OUT/perf.db" --out "$OUT/report"
}

rc=0
if [ $install -eq 1 ]; then
    run_stage deps with_log deps stage_deps || { print_summary; exit 1; }
fi
nvidia_icd
precheck_clinfo
if [ $build -eq 1 ]; then
    run_stage build with_log build stage_build_gpu || { print_summary; exit 1; }
fi
check_xo_gpu
{ "${XO_CLINFO:-clinfo}" -l 2>&1 || true; "$XO" devices --json; } >"$OUT/devices.txt" 2>&1
run_stage cl-suites with_log cl-suites stage_cl_suites || rc=1
run_stage seed with_log seed stage_seed || rc=1
run_stage probe with_log probe stage_probe || rc=1
run_stage explain with_log explain stage_explain || rc=1
run_stage record with_log record stage_record || rc=1
run_stage report with_log report stage_report || rc=1
print_summary
echo
echo "results in $OUT:"
echo "  devices.txt (clinfo, xo devices), seed.json, probe.json, explain.json,"
echo "  perf.db (the perf store), report/index.html, one <stage>.log per stage"
exit $rc
