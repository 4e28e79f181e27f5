# ci/lib.sh - shared by ci/test.sh and ci/nightly.sh: dependency install and
# stage bookkeeping (ggml's ci/run.sh style: every stage is a function and
# prints one summary line).

XO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
XO_JOBS=${XO_JOBS:-$(nproc 2>/dev/null || echo 2)}
XO_SUMMARY=()

# Debian packages the project needs to build, test and report (valgrind:
# `xo perf record --metric instructions` counts under callgrind, and its
# header carries the client requests).
XO_PACKAGES=(build-essential cmake pkg-config git libopenblas-dev libcmocka-dev
             ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
             libsqlite3-dev sqlite3 libjansson-dev gnuplot-nox clang libclang-rt-dev oclgrind
             python3 python3-numpy python3-venv libhdf5-dev libzip-dev postgresql libpq-dev valgrind)

# The lower ISA levels the cpu backend can fall back to, and the tests that
# ci/test.sh runs again at each (XO_CPU_ISA=level); ci/mutate.sh runs the same.
XO_ISA_LEVELS=(avx2 scalar)
XO_ISA_TESTS='^ops\.cpu\.|^sweep\.cpu\.|^model$|^model\.t3$'

# The tests of each product folder's area, as FOLDER=PASS[;PASS...] with a
# pass written as ci/mutate.sh's NAME:ENV:CTEST-ARGS (isa and races name its
# ISA and races passes, postgres ci/test.sh's postgres stage). ci/mutate.sh runs a generated mutant of a file in
# FOLDER against these first, stopping at the first failure; only a mutant
# that survives them is run on every pass CI runs. A folder not listed (core/,
# cli/, include/: everything uses them) gets the whole quick pass.
XO_MUTATE_AREAS=(
    'perfdb=area::-L quick -R ^(perfdb|perf_|explain|probe|untrusted_io|fuzz\.regress\.(spec|import|case));postgres'
    'model=area::-L quick -R ^(model|keras|fuzz\.regress\.(keras|npy)|badinput|untrusted_io|papercuts)'
    'kernels=area::-L quick -R ^(ops\.cpu\.|model$|model\.t3$|gradcheck|peak|probe|cpu\.);isa'
    'cl=area::-L quick -R ^(cl|ops\.cl\.|model|lint\.cl);races'
    'reference=area::-L quick -R ^(ops\.|gradcheck|model$|philox)'
)

xo_missing_packages() {
    local missing=() p
    for p in "${XO_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    echo "${missing[@]}"
}

# The Python packages of the Keras venv (xo_keras_python): Keras 3 on JAX's
# CPU build, h5py and NumPy, pinned to the versions the Keras fixtures and
# docs/model.md were checked with (all support Debian 12's Python 3.11).
XO_KERAS_PINS=(keras==3.15.1 jax==0.10.2 jaxlib==0.10.2 h5py==3.16.0 numpy==2.4.6)

# xo_keras_python: prints the python of a venv that imports Keras (on JAX),
# JAX and h5py, making it first where it is missing. The venv lives outside
# the clone, in ${XO_CACHE_DIR:-$HOME/.cache/crossover}/kvenv/KEY, KEY made
# of the base Python's version and the pins, so a fresh clone reuses it and
# a pin change makes a new one (the other keys are removed then). A venv is
# used only once its marker file says the install finished and the imports
# work; two jobs on one machine take turns (flock). Fails with one line on
# stderr when the venv cannot be made (pip cannot reach the index, say):
# CI then fails, it never skips the Keras checks.
xo_keras_python() {
    local base=${XO_KERAS_BASE_PYTHON:-/usr/bin/python3} root key dir rc
    root=${XO_CACHE_DIR:-$HOME/.cache/crossover}/kvenv
    [ -x "$base" ] || { echo "keras-venv: no $base (apt-get install python3 python3-venv)" >&2; return 1; }
    key=py$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-$(IFS=-; echo "${XO_KERAS_PINS[*]}" | sed 's/==//g')
    dir=$root/$key
    mkdir -p "$root" || { echo "keras-venv: cannot create $root" >&2; return 1; }
    (
        flock 9 || exit 1
        xo_keras_venv_ok "$dir" && exit 0
        rm -rf "$dir" && find "$root" -mindepth 1 -maxdepth 1 -type d -name 'py*' -exec rm -rf {} + &&
            "$base" -m venv "$dir" >"$root/install.log" 2>&1 &&
            "$dir/bin/python" -m pip install --no-input --progress-bar off \
                "${XO_KERAS_PINS[@]}" >>"$root/install.log" 2>&1 || {
            echo "keras-venv: pip install ${XO_KERAS_PINS[*]} into $dir failed" \
                "(is the package index reachable?): $(grep -E 'ERROR|Error' "$root/install.log" | tail -n 1)" >&2
            rm -rf "$dir"
            exit 1
        }
        touch "$dir/.xo-complete"
        xo_keras_venv_ok "$dir" || {
            echo "keras-venv: $dir installed but does not import keras, jax and h5py" >&2
            rm -rf "$dir"
            exit 1
        }
    ) 9>"$root/.lock"
    rc=$?
    [ $rc -eq 0 ] && echo "$dir/bin/python"
    return $rc
}

# The Keras venv as a stage (ci/test.sh, ci/sanitize.sh): the stages after
# it get its python in XO_KERAS_PYTHON, so keras.load_in_keras runs there.
stage_keras_venv() {
    local py
    py=$(xo_keras_python) || return 1
    export XO_KERAS_PYTHON=$py
    echo "keras-venv: $py (${XO_KERAS_PINS[*]})"
}

# xo_keras_venv_ok DIR: the venv finished installing and imports what the
# Keras checks need.
xo_keras_venv_ok() {
    [ -f "$1/.xo-complete" ] && [ -x "$1/bin/python" ] &&
        KERAS_BACKEND=jax "$1/bin/python" -c 'import keras, jax, h5py' >/dev/null 2>&1
}

# Installs what is missing when root; otherwise prints the command and fails.
stage_deps() {
    local missing
    if ! command -v dpkg-query >/dev/null; then
        echo "deps: not a Debian system; install: ${XO_PACKAGES[*]}" >&2
        return 1
    fi
    missing=$(xo_missing_packages)
    if [ -z "$missing" ]; then
        echo "deps: all ${#XO_PACKAGES[@]} packages present"
        return 0
    fi
    if [ "$(id -u)" != 0 ]; then
        echo "deps: missing packages; run as root:" >&2
        echo "  apt-get update && apt-get install -y $missing" >&2
        return 1
    fi
    echo "deps: installing $missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null &&
        apt-get install -y -qq --no-install-recommends $missing >/dev/null || return 1
    missing=$(xo_missing_packages)
    [ -z "$missing" ] || { echo "deps: still missing: $missing" >&2; return 1; }
    echo "deps: installed"
}

# run_stage NAME FUNCTION [ARGS...]: runs it, times it, records PASS/FAIL.
run_stage() {
    local name=$1 start end rc
    shift
    echo "==== stage $name"
    start=$(date +%s)
    "$@"
    rc=$?
    end=$(date +%s)
    if [ $rc -eq 0 ]; then
        XO_SUMMARY+=("$(printf '%-10s PASS  %4ss' "$name" $((end - start)))")
    else
        XO_SUMMARY+=("$(printf '%-10s FAIL  %4ss  (exit %d)' "$name" $((end - start)) $rc)")
    fi
    echo "==== stage $name: $([ $rc -eq 0 ] && echo PASS || echo FAIL) in $((end - start))s"
    return $rc
}

# xo_ctest STAGE BUILD [CTEST ARGS...]: ctest --test-dir BUILD ARGS, then no
# skip that ci/skips.tsv does not allow for STAGE (ci/skips.py): ctest keeps
# its results, every passing test's output included (CMocka prints a
# skipped case there) up to XO_CTEST_OUTPUT_MAX bytes (default 32 MB; a test
# that prints more fails the check, its skips unseen), in
# BUILD/Testing/junit-STAGE.xml for the check. CMOCKA_MESSAGE_OUTPUT is
# unset so CMocka prints its standard format, the one the check reads. Fails
# when ctest fails or the check does; the check's lines say which skip.
xo_ctest() {
    local stage=$1 build=$2 junit rc max=${XO_CTEST_OUTPUT_MAX:-32000000}
    shift 2
    junit=$(cd "$build" 2>/dev/null && pwd)/Testing/junit-$stage.xml
    rm -f "$junit"
    env -u CMOCKA_MESSAGE_OUTPUT ctest --test-dir "$build" --output-junit "$junit" \
        --test-output-size-passed "$max" "$@"
    rc=$?
    python3 "$XO_ROOT/ci/skips.py" --stage "$stage" --list "${XO_SKIPS_LIST:-$XO_ROOT/ci/skips.tsv}" \
        --max-output "$max" "$junit" || rc=1
    return $rc
}

# The sanitizer build and its quick suites (ci/test.sh, ci/sanitize.sh).
stage_asan_build() {
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DXO_SANITIZE=ON -DXO_WERROR=ON \
        -DCMAKE_C_FLAGS_DEBUG="-O1 -g" >build-asan.log 2>&1 &&
        cmake --build build-asan -j"$XO_JOBS" >>build-asan.log 2>&1
    local rc=$?
    [ $rc -eq 0 ] || tail -n 40 build-asan.log
    return $rc
}

# True when the ICD loader offers NVIDIA's OpenCL platform: `clinfo -l`
# ($XO_CLINFO) names it, or, without clinfo, a vendor ICD file (in
# $OCL_ICD_VENDORS, a directory or one file, else /etc/OpenCL/vendors)
# points at libnvidia-opencl. clinfo is not sanitized, so asking it is safe.
xo_opencl_is_nvidia() {
    local clinfo=${XO_CLINFO:-clinfo} vendors=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}
    if command -v "$clinfo" >/dev/null 2>&1; then
        "$clinfo" -l 2>/dev/null | grep -qi '^Platform #[0-9]*: NVIDIA'
        return
    fi
    if [ -d "$vendors" ]; then
        cat "$vendors"/*.icd 2>/dev/null | grep -qi 'libnvidia-opencl'
    else
        grep -qsi 'libnvidia-opencl' "$vendors"
    fi
}

# ASAN_OPTIONS of the sanitizer stage (unless the caller set ASAN_OPTIONS).
# allocator_may_return_null=1: an allocation ASan cannot serve (a size from a
# hostile file) returns NULL as malloc does in a release build, so the code's
# own out-of-memory path runs and must refuse cleanly, instead of ASan
# aborting first. On an NVIDIA OpenCL host also protect_shadow_gap=0 and
# replace_intrin=0: the CUDA driver maps memory at fixed addresses inside
# ASan's shadow gap and writes them with memset (docs/opencl.md,
# "Sanitizers on an NVIDIA host").
xo_asan_options() {
    local o=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1
    xo_opencl_is_nvidia && o=$o:protect_shadow_gap=0:replace_intrin=0
    echo "${ASAN_OPTIONS:-$o}"
}

# The environment of the sanitized suites, one NAME=VALUE a line. PoCL, the
# ICD loader and NVIDIA's driver keep allocations alive until exit (their
# own caches); those leaks are suppressed by library name (suites/lsan.supp),
# ours are not. XO_ASAN_OPENCL=pocl: the ICD loader sees PoCL only
# ($XO_POCL_ICD, default /etc/OpenCL/vendors/pocl.icd), the documented
# fallback where NVIDIA's driver still fails under ASan with the options
# above (docs/opencl.md); the options are then those of the platforms left.
xo_asan_env() {
    local vendors=${OCL_ICD_VENDORS:-}
    if [ "${XO_ASAN_OPENCL:-}" = pocl ]; then
        vendors=${XO_POCL_ICD:-/etc/OpenCL/vendors/pocl.icd}
        [ -f "$vendors" ] || { echo "asan-test: XO_ASAN_OPENCL=pocl but $vendors is missing" >&2; return 1; }
    fi
    if [ -n "$vendors" ]; then
        echo "ASAN_OPTIONS=$(OCL_ICD_VENDORS=$vendors xo_asan_options)"
        echo "OCL_ICD_VENDORS=$vendors"
    else
        echo "ASAN_OPTIONS=$(xo_asan_options)"
    fi
    echo "LSAN_OPTIONS=suppressions=$XO_ROOT/suites/lsan.supp:print_suppressions=0"
    echo "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
}

stage_asan_test() {
    local envs vars v
    envs=$(xo_asan_env) || return 1
    mapfile -t vars <<<"$envs"
    echo "asan-test: ${vars[*]}"
    (
        for v in "${vars[@]}"; do export "${v?}"; done
        xo_ctest asan build-asan -L quick -j"$XO_JOBS" --timeout 600
    )
}

# The fuzz targets (docs/fuzzing.md): a clang build with libFuzzer, ASan and
# UBSan in build-fuzz/, then fuzz/run.sh runs each target for
# $XO_FUZZ_SECONDS (60 in ci/test.sh, 600 in ci/nightly.sh). A finding fails
# the stage; its reproducer stays in build-fuzz/fuzz-out/artifacts/<target>/.
stage_fuzz_build() {
    CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g" \
        -DXO_FUZZ=ON -DXO_OPENCL=OFF >build-fuzz.log 2>&1 &&
        cmake --build build-fuzz -j"$XO_JOBS" --target xo_fuzz_targets >>build-fuzz.log 2>&1
    local rc=$?
    [ $rc -eq 0 ] || tail -n 40 build-fuzz.log
    return $rc
}

stage_fuzz() {
    XO_FUZZ_BUILD=$XO_ROOT/build-fuzz XO_FUZZ_OUT=$XO_ROOT/build-fuzz/fuzz-out \
        bash "$XO_ROOT/fuzz/run.sh"
    local rc=$?
    echo "fuzz: per-target summary in build-fuzz/fuzz-out/summary.txt," \
        "reproducers in build-fuzz/fuzz-out/artifacts/"
    return $rc
}

print_summary() {
    echo
    echo "==== summary"
    local line
    for line in "${XO_SUMMARY[@]}"; do
        echo "$line"
    done
}
