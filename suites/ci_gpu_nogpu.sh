#!/usr/bin/env bash
# ci_gpu_nogpu.sh BUILD_DIR WORK - ci/gpu.sh on a machine without a GPU
# OpenCL device (or told to use PoCL: XO_CL_DEVICE=portable) stops before
# any stage with exit 2 and one line naming the reason, both when clinfo
# answers (before building) and when only the built xo can (clinfo missing).
# It must not run anything on the CPU: no stage log, no result file.
# Exit 0 pass, 1 fail.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$1
work=$2
fail=0

run_case() { # NAME REGEX [VAR=VALUE ...]
    local name=$1 re=$2 out rc lines
    shift 2
    rm -rf "$work/$name"
    mkdir -p "$work/$name"
    env XO_CL_DEVICE=portable "$@" bash "$root/ci/gpu.sh" --no-install --no-build \
        --build-dir "$build" --out "$work/$name/out" >"$work/$name/stdout" 2>"$work/$name/stderr"
    rc=$?
    lines=$(wc -l <"$work/$name/stderr")
    out=$(cat "$work/$name/stderr")
    echo "$name: exit $rc: $out"
    if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qE "$re" "$work/$name/stderr"; then
        echo "FAIL $name: want exit 2 and one line matching '$re'"
        fail=1
    fi
    if [ -n "$(ls -A "$work/$name/out" 2>/dev/null)" ] || [ -s "$work/$name/stdout" ]; then
        echo "FAIL $name: something ran: $(ls -A "$work/$name/out") $(head -c 300 "$work/$name/stdout")"
        fail=1
    fi
}

if command -v clinfo >/dev/null && ! clinfo --raw 2>/dev/null | grep -q CL_DEVICE_TYPE_GPU; then
    run_case clinfo '^ci/gpu\.sh: no GPU OpenCL device: clinfo lists .*\((CPU|ACCELERATOR|CUSTOM)\)'
fi
# clinfo missing: the built xo decides, through the cl backend's own choice
run_case xo '^ci/gpu\.sh: no GPU OpenCL device: cl: (XO_REQUIRE_OPENCL=gpu but the chosen device .* is not a GPU \(CL_DEVICE_TYPE [A-Za-z]+;|no OpenCL)' \
    XO_CLINFO=/nonexistent/clinfo
# A driver library that no ICD file names (a container that mounts NVIDIA's
# libraries without /etc/OpenCL/vendors/nvidia.icd): gpu.sh points the loader
# at it through its own vendors directory and says so on stdout. The fake
# library does not load, so the check still stops with exit 2 and one line.
mkdir -p "$work/fakelib" && : >"$work/fakelib/libnvidia-opencl.so.1"
rm -rf "$work/icd"
env -u OCL_ICD_VENDORS XO_NVIDIA_LIB_DIRS="/nonexistent $work/fakelib" bash "$root/ci/gpu.sh" \
    --no-install --no-build --build-dir "$build" --out "$work/icd/out" >"$work/icd.stdout" \
    2>"$work/icd.stderr"
rc=$?
if grep -qs libnvidia-opencl /etc/OpenCL/vendors/*.icd; then
    echo "icd: skipped (this machine's ICD files already name NVIDIA's driver)"
elif [ $rc -ne 2 ] || [ "$(wc -l <"$work/icd.stderr")" -ne 1 ] ||
    ! grep -q "^gpu: no ICD file names NVIDIA's OpenCL driver; using $work/fakelib/libnvidia-opencl.so.1 (OCL_ICD_VENDORS=" "$work/icd.stdout" ||
    [ "$(cat "$work/icd/out/icd/nvidia.icd" 2>/dev/null)" != "$work/fakelib/libnvidia-opencl.so.1" ]; then
    echo "FAIL icd: exit $rc, stdout: $(cat "$work/icd.stdout"), stderr: $(cat "$work/icd.stderr"), icd: $(cat "$work/icd/out/icd/nvidia.icd" 2>&1)"
    fail=1
else
    echo "icd: exit 2, $(cat "$work/icd.stdout")"
fi
# bad usage is exit 2 too, with its own line
bash "$root/ci/gpu.sh" --no-such-option 2>"$work/usage.err"
rc=$?
if [ $rc -ne 2 ] || ! grep -q "unknown argument '--no-such-option'" "$work/usage.err"; then
    echo "FAIL usage: exit $rc: $(cat "$work/usage.err")"
    fail=1
fi
exit $fail
