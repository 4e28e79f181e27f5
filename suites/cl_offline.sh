#!/usr/bin/env bash
# cl_offline.sh - compiles the OpenCL program offline for GPU targets, the way
# a clang-based GPU driver would (NVIDIA's and most others' OpenCL compilers
# are LLVM-based), so a program that only PoCL accepts fails here, on a
# machine without a GPU.
#
# For each tuning row's build options (the -D macros a GPU gets), each target
# (nvptx64-nvidia-nvcl, spir64) and -O0 / -O2: clang must compile it, and the
# LLVM IR must not declare any function the program itself should define.
# A non-static `inline` helper is the classic case: C99 inline semantics
# leave it as an external declaration that nothing defines, which PoCL
# happens to resolve and a GPU driver does not ("undefined function" at
# clBuildProgram or at link time). Every declared function must therefore be
# an LLVM intrinsic or an OpenCL C builtin (mangled, from clang's
# opencl-c.h) that is not one of ours.
#
# usage: cl_offline.sh DUMP_TOOL WORKDIR [--self-test] [ROW ...]
#   --self-test: first prove the checker fails on a program with a
#   non-static inline helper (the checker is tested too, STYLE 14).
#   ROW ...: only these tuning rows (default: all five); ctest runs one row
#   a test so that no test runs for minutes on a loaded machine.
set -u -o pipefail
dump=$1
work=$2
shift 2
self_test=
if [ "${1:-}" = --self-test ]; then
    self_test=--self-test
    shift
fi
rows=("$@")
[ ${#rows[@]} -gt 0 ] || rows=(default nvidia amd intel pocl)
clang=${XO_CLANG:-clang}
mkdir -p "$work"

if ! command -v "$clang" >/dev/null; then
    echo "cl_offline: $clang not found: install clang (ci/lib.sh installs it)" >&2
    exit 1
fi

# check_ir FILE.ll SOURCE.cl: prints each declared function the program
# defines itself or that is no OpenCL builtin; returns 1 when there is one.
check_ir() {
    local ll=$1 src=$2 bad=0 sym name
    # names of the functions the sources define at file scope (kernels and
    # helpers start in column 0; macro-made helpers carry our xo_ prefix)
    local ours
    ours=$(sed -nE 's/^((static|inline|__kernel|kernel)[[:space:]]+)*[A-Za-z_][A-Za-z0-9_]*[[:space:]]+\**([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*\(.*/\3/p' "$src" |
        sort -u)
    while read -r sym; do
        [ -z "$sym" ] && continue
        case $sym in
        llvm.*) continue ;;
        esac
        if [[ $sym == _Z* ]]; then
            name=$(llvm-cxxfilt "$sym" 2>/dev/null || c++filt "$sym")
            name=${name%%(*}
            if [[ $name == xo_* ]] || grep -qxF "$name" <<<"$ours"; then
                # an overloadable function of ours left undefined
                echo "  undefined: $name ($sym)"
                bad=1
            fi
            continue
        fi
        echo "  undefined: $sym"
        bad=1
    done < <(sed -nE 's/^declare [^@]*@"?([^"( ]+)"?\(.*/\1/p' "$ll")
    return $bad
}

compile_all() {
    local src=$1 opts=$2 tag=$3 rc=0 t o ll
    for t in nvptx64-nvidia-nvcl spir64; do
        for o in O0 O2; do
            ll=$work/$tag.$t.$o.ll
            # shellcheck disable=SC2086
            if ! "$clang" -x cl $opts -target "$t" -$o -S -emit-llvm -o "$ll" "$src" \
                2>"$ll.log"; then
                echo "cl_offline: $tag: clang -target $t -$o failed:"
                head -n 20 "$ll.log"
                rc=1
                continue
            fi
            if ! check_ir "$ll" "$src"; then
                echo "cl_offline: $tag: $t -$o leaves the functions above undefined" \
                    "(make helpers 'static inline')"
                rc=1
            fi
        done
    done
    return $rc
}

if [ "$self_test" = --self-test ]; then
    cat >"$work/selftest.cl" <<'CL'
inline float helper(float v) { return v * 2.0f; }
__kernel void k(__global float *x) { x[get_global_id(0)] = helper(x[0]); }
CL
    if compile_all "$work/selftest.cl" "-cl-std=CL1.2" selftest >"$work/selftest.out" 2>&1; then
        echo "cl_offline: self-test FAILED: a non-static inline helper was not reported"
        exit 1
    fi
    grep -q "undefined: helper" "$work/selftest.out" || {
        echo "cl_offline: self-test FAILED: unexpected report:"
        cat "$work/selftest.out"
        exit 1
    }
    echo "cl_offline: self-test passed (a non-static inline helper is reported)"
fi

# A row whose program text, options, clang and this checker are byte for
# byte those of a row that passed before passes again without the four
# compiles (~6 s of CPU a row): clang's output for the same input is the
# same. The passes are kept by that content's hash in XO_CL_OFFLINE_CACHE
# (default ~/.cache/crossover/cl-offline; empty: compile every time), so a
# kernel change, a mutant of one, a new row or a new clang compiles anew.
cache=${XO_CL_OFFLINE_CACHE-${XO_CACHE_DIR:-$HOME/.cache/crossover}/cl-offline}
clang_id=$("$clang" --version 2>&1)
rc=0
for row in "${rows[@]}"; do
    "$dump" "$row" "$work/$row.cl" "$work/$row.opts" || exit 1
    key=""
    if [ -n "$cache" ]; then
        key=$({ cat "$work/$row.cl" "$work/$row.opts" "${BASH_SOURCE[0]}"; echo "$clang_id"; } |
            sha256sum | cut -c1-32)
        if [ -f "$cache/$key" ]; then
            echo "cl_offline: row $row: this program, these options and this clang passed" \
                "before ($cache/$key): not compiled again"
            continue
        fi
    fi
    if compile_all "$work/$row.cl" "$(cat "$work/$row.opts")" "$row"; then
        echo "cl_offline: row $row: nvptx64 and spir64 at -O0/-O2: compiled, no undefined helper"
        [ -n "$key" ] && mkdir -p "$cache" && : >"$cache/$key"
    else
        rc=1
    fi
done
exit $rc
