#!/usr/bin/env bash
# cl_asan_env.sh - the sanitizer stage's environment (ci/lib.sh
# xo_asan_options, xo_asan_env): NVIDIA's OpenCL platform, found by clinfo or
# by its ICD file, adds the options the CUDA driver needs under ASan; PoCL
# alone does not; XO_ASAN_OPENCL=pocl restricts the ICD loader to PoCL; a
# caller's ASAN_OPTIONS wins. Fake clinfo and ICD directories, so it
# runs on any machine. Exit 0 pass, 1 fail.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=../ci/lib.sh
source "$root/ci/lib.sh"
unset ASAN_OPTIONS
fail=0

check() { # NAME WANT(yes|no) [VAR=VALUE ...]
    local name=$1 want=$2 got opts
    shift 2
    opts=$(env "$@" bash -c 'source "$0/ci/lib.sh"; xo_asan_options' "$root")
    case $opts in *protect_shadow_gap=0*replace_intrin=0*) got=yes ;; *) got=no ;; esac
    # the base options on every host; intercept_tls_get_addr=0 keeps
    # LeakSanitizer's exit scan out of the dynamic TLS it crashed on
    case $opts in *allocator_may_return_null=1*intercept_tls_get_addr=0*) ;; *) got=missing-base ;; esac
    if [ "$got" != "$want" ]; then
        echo "FAIL $name: want nvidia options $want, got '$opts'"
        fail=1
    else
        echo "ok   $name: $opts"
    fi
}

printf '#!/bin/sh\necho "Platform #0: NVIDIA CUDA"\necho " \\`-- Device #0: NVIDIA H100"\necho "Platform #1: Portable Computing Language"\n' >"$work/clinfo-nv"
printf '#!/bin/sh\necho "Platform #0: Portable Computing Language"\necho " \\`-- Device #0: cpu"\n' >"$work/clinfo-pocl"
chmod +x "$work/clinfo-nv" "$work/clinfo-pocl"
mkdir -p "$work/icd-nv" "$work/icd-pocl"
echo libnvidia-opencl.so.1 >"$work/icd-nv/nvidia.icd"
echo libpocl.so.2 >"$work/icd-nv/pocl.icd"
echo libpocl.so.2 >"$work/icd-pocl/pocl.icd"

check clinfo-nvidia yes XO_CLINFO="$work/clinfo-nv"
check clinfo-pocl no XO_CLINFO="$work/clinfo-pocl"
check icd-dir-nvidia yes XO_CLINFO=/nonexistent/clinfo OCL_ICD_VENDORS="$work/icd-nv"
check icd-dir-pocl no XO_CLINFO=/nonexistent/clinfo OCL_ICD_VENDORS="$work/icd-pocl"
check icd-file-nvidia yes XO_CLINFO=/nonexistent/clinfo OCL_ICD_VENDORS="$work/icd-nv/nvidia.icd"
check icd-none no XO_CLINFO=/nonexistent/clinfo OCL_ICD_VENDORS="$work/none"
# XO_ASAN_OPENCL=pocl: the loader sees PoCL's ICD only, and the options are
# those of what is left (a clinfo that, like the real one, asks the loader)
printf '#!/bin/sh\ncase "${OCL_ICD_VENDORS:-}" in *pocl.icd) echo "Platform #0: Portable Computing Language";; *) echo "Platform #0: NVIDIA CUDA";; esac\n' >"$work/clinfo-loader"
chmod +x "$work/clinfo-loader"
env_nv=$(XO_CLINFO="$work/clinfo-loader" xo_asan_env)
env_pocl=$(XO_CLINFO="$work/clinfo-loader" XO_ASAN_OPENCL=pocl XO_POCL_ICD="$work/icd-nv/pocl.icd" xo_asan_env)
grep -q '^ASAN_OPTIONS=.*protect_shadow_gap=0' <<<"$env_nv" && ! grep -q '^OCL_ICD_VENDORS=' <<<"$env_nv" ||
    { echo "FAIL asan env on NVIDIA: $env_nv"; fail=1; }
grep -q "^OCL_ICD_VENDORS=$work/icd-nv/pocl.icd\$" <<<"$env_pocl" &&
    ! grep -q 'protect_shadow_gap' <<<"$env_pocl" ||
    { echo "FAIL asan env with XO_ASAN_OPENCL=pocl: $env_pocl"; fail=1; }
grep -q "^LSAN_OPTIONS=suppressions=$root/suites/lsan.supp" <<<"$env_pocl" ||
    { echo "FAIL asan env: no suppressions: $env_pocl"; fail=1; }
if XO_ASAN_OPENCL=pocl XO_POCL_ICD="$work/none.icd" xo_asan_env >/dev/null 2>"$work/err"; then
    echo "FAIL XO_ASAN_OPENCL=pocl without PoCL's ICD was accepted"
    fail=1
fi
grep -q "none.icd is missing" "$work/err" || { echo "FAIL no reason: $(cat "$work/err")"; fail=1; }
# the caller's ASAN_OPTIONS wins
opts=$(ASAN_OPTIONS=detect_leaks=0 XO_CLINFO="$work/clinfo-nv" xo_asan_options)
[ "$opts" = detect_leaks=0 ] || { echo "FAIL caller's ASAN_OPTIONS: got '$opts'"; fail=1; }
# every NVIDIA library the suppressions promise is there
for lib in libnvidia-opencl libcuda; do
    grep -q "^leak:$lib\$" "$root/suites/lsan.supp" || { echo "FAIL lsan.supp lacks $lib"; fail=1; }
done
exit $fail
