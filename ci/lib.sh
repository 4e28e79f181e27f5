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
             python3 python3-numpy python3-venv libhdf5-dev libzip-dev postgresql libpq-dev valgrind
             ccache)

# The lower ISA levels the cpu backend can fall back to, and the tests that
# ci/test.sh runs again at each (XO_CPU_ISA=level); ci/mutate.sh runs the same.
XO_ISA_LEVELS=(avx2 scalar)
XO_ISA_TESTS='^ops\.cpu\.|^sweep\.cpu\.|^model$|^model\.t3$'

# xo_isa_fallbacks XO: the levels of XO_ISA_LEVELS below the one the cpu
# backend of binary XO picks on this machine (`XO devices`, isa=LEVEL), one a
# line: a level equal to it is what the quick pass itself ran (on a CPU
# with AVX2 and no AVX-512 the avx2 pass would repeat it), and one above it
# the backend refuses. Unknown level: every level, as before.
xo_isa_fallbacks() {
    local out top rank l r
    out=$("$1" devices 2>/dev/null)
    top=$(sed -n 's/^cpu .* isa=\([a-z0-9]*\).*/\1/p' <<<"$out")
    top=${top%%$'\n'*}
    rank=$(xo_isa_rank "$top")
    for l in "${XO_ISA_LEVELS[@]}"; do
        r=$(xo_isa_rank "$l")
        if [ "$rank" -lt 0 ] || { [ "$r" -ge 0 ] && [ "$r" -lt "$rank" ]; }; then
            echo "$l"
        fi
    done
}

# xo_isa_rank LEVEL: 0 for scalar, 1 for avx2, 2 for avx512, -1 for another
xo_isa_rank() {
    case $1 in
    scalar) echo 0 ;;
    avx2) echo 1 ;;
    avx512) echo 2 ;;
    *) echo -1 ;;
    esac
}

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
        grep -q "install ok installed" <<<"$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" ||
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

# xo_fast_tmpdir: point TMPDIR at a fresh folder on a tmpfs for the rest of
# the job, removed when it exits. The suites create and delete a few hundred
# thousand files (each bad-input case copies its 97 fixtures, each
# PostgreSQL test copies a cluster, checkpoints are written and removed), and
# on a disk's ext4 every creation searches the inode bitmap past the
# recently deleted ones: 5% of asan-test's CPU (30 CPU-s) was
# __ext4_new_inode (perf record -a, 2-core EPYC VM), none of it on a tmpfs.
# The folder is XO_CI_TMPDIR/xo-ci-PID-XXXXXX (default /dev/shm, used only
# when it is a writable tmpfs with 4 GiB free); XO_CI_TMPDIR= (empty) keeps
# TMPDIR as it is. Folders of jobs whose pid is gone are removed first.
# Silent: the nightly's stage logs and notes stay as they were.
xo_fast_tmpdir() {
    local base=${XO_CI_TMPDIR-/dev/shm} d pid avail
    [ -n "$base" ] && [ -d "$base" ] && [ -w "$base" ] || return 0
    if [ "$base" = /dev/shm ]; then
        [ "$(stat -f -c %T "$base" 2>/dev/null)" = tmpfs ] || return 0
        avail=$(df -Pk "$base" 2>/dev/null | awk 'NR == 2 {print $4}')
        [ "${avail:-0}" -ge 4194304 ] || return 0
    fi
    for d in "$base"/xo-ci-*-*; do
        [ -d "$d" ] && [ -O "$d" ] || continue
        pid=${d##*/xo-ci-}
        pid=${pid%%-*}
        [[ $pid =~ ^[0-9]+$ ]] && ! kill -0 "$pid" 2>/dev/null && rm -rf "$d"
    done
    d=$(mktemp -d "$base/xo-ci-$$-XXXXXX") || return 0
    # a TMPDIR like /tmp: tests that drop to another user (setpriv
    # nobody) must reach and write their files in it
    chmod 1777 "$d" || { rmdir "$d"; return 0; }
    XO_FAST_TMPDIR=$d
    export TMPDIR=$d
    trap 'rm -rf "$XO_FAST_TMPDIR"' EXIT
}

# xo_ccache_setup: every CMake build the CI job starts (its three builds,
# the scratch trees of the mutation stages and of the tests that build one)
# compiles through ccache, CMake reading CMAKE_C_COMPILER_LAUNCHER from the
# environment. The cache lives outside the clone, in
# ${XO_CACHE_DIR:-$HOME/.cache/crossover}/ccache, so a fresh clone on the same
# machine compiles only what changed; CCACHE_BASEDIR (the clone) and
# CCACHE_NOHASHDIR make the paths relative, so a clone elsewhere hits too.
# ccache hashes the preprocessed source, flags and compiler, so a hit is the
# object the compiler would make. XO_CCACHE=0, or no ccache, compiles
# directly (a cold build: docs/testing.md gives both times).
xo_ccache_setup() {
    if [ "${XO_CCACHE:-1}" = 0 ] || ! command -v ccache >/dev/null; then
        unset CMAKE_C_COMPILER_LAUNCHER
        echo "ccache: off (XO_CCACHE=${XO_CCACHE:-1}, ccache $(command -v ccache || echo missing))"
        return 0
    fi
    export CMAKE_C_COMPILER_LAUNCHER=ccache
    export CCACHE_DIR=${CCACHE_DIR:-${XO_CACHE_DIR:-$HOME/.cache/crossover}/ccache}
    export CCACHE_BASEDIR=$XO_ROOT CCACHE_NOHASHDIR=1
    export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
    mkdir -p "$CCACHE_DIR" || { echo "ccache: cannot create $CCACHE_DIR" >&2; return 1; }
    echo "ccache: $CCACHE_DIR"
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

# xo_cpu_ticks: user+sys clock ticks of every child this shell has waited
# for (cutime + cstime of /proc/$$/stat; a stage's tools, ctest's tests and
# their children, each counted once its parent reaps it), 0 without /proc.
xo_cpu_ticks() {
    local s
    s=$(cat "/proc/$$/stat" 2>/dev/null) || { echo 0; return; }
    s=${s##*) }
    # shellcheck disable=SC2086
    set -- $s
    echo $((${14} + ${15}))
}

# The stages run so far, for the summary and xo_ci_times_store: name, wall
# and CPU (user+sys of its processes) in milliseconds, exit status.
XO_STAGE_NAME=() XO_STAGE_WALL_MS=() XO_STAGE_CPU_MS=() XO_STAGE_RC=()
XO_CI_LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)

# run_stage NAME FUNCTION [ARGS...]: runs it, times it (wall and CPU),
# records PASS/FAIL.
run_stage() {
    local name=$1 start end c0 c1 rc wall cpu hz
    shift
    echo "==== stage $name"
    hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
    # the wall clock encloses the CPU readings, so the CPU window is inside
    # the wall one
    start=$(date +%s%N)
    c0=$(xo_cpu_ticks)
    "$@"
    rc=$?
    c1=$(xo_cpu_ticks)
    end=$(date +%s%N)
    wall=$(((end - start) / 1000000))
    cpu=$(((c1 - c0) * 1000 / hz))
    XO_STAGE_NAME+=("$name") XO_STAGE_WALL_MS+=("$wall") XO_STAGE_CPU_MS+=("$cpu") XO_STAGE_RC+=("$rc")
    if [ $rc -eq 0 ]; then
        XO_SUMMARY+=("$(printf '%-10s PASS  %4ss  cpu %5ss' "$name" $((wall / 1000)) $((cpu / 1000)))")
    else
        XO_SUMMARY+=("$(printf '%-10s FAIL  %4ss  cpu %5ss  (exit %d)' "$name" $((wall / 1000)) \
            $((cpu / 1000)) $rc)")
    fi
    echo "==== stage $name: $([ $rc -eq 0 ] && echo PASS || echo FAIL) in $((wall / 1000))s" \
        "(cpu $((cpu / 1000))s)"
    return $rc
}

# xo_ci_times_json PEER I: stage I's time as an `xo perf import` file
# (docs/perf.md, "import"; the names it takes): model ci.NAME, one sample of
# benchmark train_step at batch 1, as peer PEER: ci for the wall time,
# ci-cpu for user+sys. The note carries the machine's load averages at the
# job's start and end and the parallelism, since both move a wall time.
xo_ci_times_json() {
    local peer=$1 i=$2 t load_end
    load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
    if [ "$peer" = ci-cpu ]; then t=${XO_STAGE_CPU_MS[$i]}; else t=${XO_STAGE_WALL_MS[$i]}; fi
    printf '{"device": "%s", "model": "ci.%s",\n "note": "load %s at start, %s at end; XO_JOBS %s; ccache %s",\n' \
        "$peer" "${XO_STAGE_NAME[$i]}" "${XO_CI_LOAD_START:-?}" "${load_end:-?}" "$XO_JOBS" \
        "$([ -n "${CMAKE_C_COMPILER_LAUNCHER:-}" ] && echo on || echo off)"
    printf ' "results": [{"benchmark": "train_step", "batch": 1, "samples_s": [%d.%03d]}]}\n' \
        $((t / 1000)) $((t % 1000))
}

# xo_ci_times_store XO STORE: every passed stage's wall and CPU time into
# the perf store STORE (made if missing) through `XO perf import`, at this
# tree's commit (XO_SOURCE_DIR) and the machine's testbed, so that `xo perf
# detect/compare/report --db STORE` show CI's own time as series
# model/ci.STAGE/train_step/b1/ci (wall) and .../ci-cpu (user+sys). A failed
# stage did a different amount of work and is left out, as is a time under
# a millisecond. Prints one line; a store that cannot be written is said on
# stderr and returns 1 (ci/test.sh reports it and does not fail the job:
# the checks passed).
xo_ci_times_store() {
    local xo=$1 db=$2 i peer tmp n=0 err
    [ -x "$xo" ] || { echo "ci-times: no $xo to store the stage times with" >&2; return 1; }
    mkdir -p "$(dirname "$db")" || { echo "ci-times: cannot create $(dirname "$db")" >&2; return 1; }
    tmp=$(mktemp) || return 1
    for i in "${!XO_STAGE_NAME[@]}"; do
        [ "${XO_STAGE_RC[$i]}" = 0 ] || continue
        for peer in ci ci-cpu; do
            if [ "$peer" = ci-cpu ]; then
                [ "${XO_STAGE_CPU_MS[$i]}" -gt 0 ] || continue
            else
                [ "${XO_STAGE_WALL_MS[$i]}" -gt 0 ] || continue
            fi
            xo_ci_times_json "$peer" "$i" >"$tmp"
            if ! err=$(XO_SOURCE_DIR=$XO_ROOT "$xo" perf import --db "$db" --peer "$peer" \
                --json "$tmp" 2>&1 >/dev/null); then
                echo "ci-times: storing stage ${XO_STAGE_NAME[$i]} in $db failed: $err" >&2
                rm -f "$tmp"
                return 1
            fi
            n=$((n + 1))
        done
    done
    rm -f "$tmp"
    echo "ci-times: $n stage times stored in $db (xo perf detect --db $db)"
}

# xo_ctest STAGE BUILD [CTEST ARGS...]: ctest --test-dir BUILD ARGS, then no
# skip that ci/skips.tsv does not allow for STAGE (ci/skips.py): ctest keeps
# its results, every passing test's output included (CMocka prints a
# skipped case there) up to XO_CTEST_OUTPUT_MAX bytes (default 32 MB; a test
# that prints more fails the check, its skips unseen), in
# BUILD/Testing/junit-STAGE.xml for the check. CMOCKA_MESSAGE_OUTPUT is
# unset so CMocka prints its standard format, the one the check reads. Fails
# when ctest fails or the check does; the check's lines say which skip.
#
# ctest starts the tests it knows to be long first (their times in
# BUILD/Testing/Temporary/CTestCostData.txt), so -j keeps both cores busy to
# the end instead of one long test running alone last. A fresh clone has no
# such file: where the caller sets XO_CTEST_COST_KEEP=1 (ci/test.sh,
# ci/sanitize.sh; a shell variable, not exported, so the tests' own ctest
# runs keep out of it) it is kept between jobs in
# ${XO_CACHE_DIR:-$HOME/.cache/crossover}/ctest-cost/BUILD-NAME.txt, copied
# in where the build has none and back after the run. It only orders tests.
xo_ctest() {
    local stage=$1 build=$2 junit rc max=${XO_CTEST_OUTPUT_MAX:-32000000} cost kept
    shift 2
    junit=$(cd "$build" 2>/dev/null && pwd)/Testing/junit-$stage.xml
    rm -f "$junit"
    cost=$build/Testing/Temporary/CTestCostData.txt
    kept=${XO_CACHE_DIR:-$HOME/.cache/crossover}/ctest-cost/$(basename "$build").txt
    [ "${XO_CTEST_COST_KEEP:-0}" = 1 ] || kept=""
    if [ -n "$kept" ] && [ ! -s "$cost" ] && [ -s "$kept" ]; then
        mkdir -p "$(dirname "$cost")" && cp "$kept" "$cost"
    fi
    env -u CMOCKA_MESSAGE_OUTPUT ctest --test-dir "$build" --output-junit "$junit" \
        --test-output-size-passed "$max" "$@"
    rc=$?
    if [ -n "$kept" ] && [ -s "$cost" ]; then
        mkdir -p "$(dirname "$kept")" && cp "$cost" "$kept.$$" && mv "$kept.$$" "$kept"
    fi
    python3 "$XO_ROOT/ci/skips.py" --stage "$stage" --list "${XO_SKIPS_LIST:-$XO_ROOT/ci/skips.tsv}" \
        --max-output "$max" "$junit" || rc=1
    xo_ctest_slowest "$stage" "$junit"
    return $rc
}

# xo_ctest_slowest STAGE JUNIT: one line naming the stage's three slowest
# tests, and one naming every test over a minute (CI's bound per test: a
# longer one is split into ctest entries so that -j balances; docs/testing.md).
# Informational: a loaded machine stretches wall times.
xo_ctest_slowest() {
    [ -s "$2" ] || return 0
    python3 - "$1" "$2" <<'PY' || true
import sys
import xml.etree.ElementTree as ET
stage, path = sys.argv[1:3]
t = sorted(((float(c.get("time") or 0), c.get("name")) for c in ET.parse(path).iter("testcase")),
           reverse=True)
print("%s: slowest: %s" % (stage, ", ".join("%s %.0fs" % (n, s) for s, n in t[:3])))
over = [(s, n) for s, n in t if s > 60]
if over:
    print("%s: over 60 s: %s" % (stage, ", ".join("%s %.0fs" % (n, s) for s, n in over)))
PY
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
        grep -qi '^Platform #[0-9]*: NVIDIA' <<<"$("$clinfo" -l 2>/dev/null)"
        return
    fi
    if [ -d "$vendors" ]; then
        grep -qi 'libnvidia-opencl' <<<"$(cat "$vendors"/*.icd 2>/dev/null)"
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
#
# intercept_tls_get_addr=0: LeakSanitizer's exit scan otherwise walks the
# dynamic TLS blocks ASan records through __tls_get_addr, and with PoCL's
# dlopen'd kernels (glibc 2.36, GCC 12's libasan) one of them came back as
# garbage ("DTLS 12 at 0x000000000733-0x000800001835"), the scan crashed
# ("Tracer caught signal 11", exit 1) and the test failed: deterministic for
# a given binary, and brought on by a change that only moved code
# (model.cli.embedding_ids, `xo predict --device cl`). Without the
# interception the scan does not read dynamic TLS; a block of ours held only
# there could be reported as a leak (none is: xo keeps no __thread data in a
# library it loads), never hidden.
xo_asan_options() {
    local o=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1:intercept_tls_get_addr=0
    xo_opencl_is_nvidia && o=$o:protect_shadow_gap=0:replace_intrin=0
    # XO_ASAN_QUARANTINE_MB: ASan's quarantine of freed memory (256 MB by
    # default), where a use after free is seen while the block is in it
    [ -n "${XO_ASAN_QUARANTINE_MB:-}" ] && o=$o:quarantine_size_mb=$XO_ASAN_QUARANTINE_MB
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

# Each quick test runs once in CI, in the sanitized build (asan-test),
# unless it is of one of the kinds below, which the plain test stage runs
# (XO_PLAIN_CI_TESTS): the first two only there, the third in both builds.
#
# XO_ASAN_CI_EXCLUDE: ASan and UBSan would watch little of ours in them.
# ci.*, lint.* and coverage.*: scripts checking the CI tooling, the sources
# and coverage (the scratch trees ci.* build are plain builds of their own);
# cl.offline_gpu_compile: clang compiling the kernels for GPU targets (our
# only binary there prints the program's source); keras.load_in_keras*:
# Keras (Python) reading files xo wrote, the C side of which (xo train
# --save, predict, the .keras and .weights.h5 writers) runs sanitized in the
# keras and model.cli suites; sweep.cl.*: the cl ops over the sweep's
# shapes, whose time is the kernels' inside PoCL, which ASan does not
# instrument (61 s sanitized against 57 s plain in a measured run; Oclgrind
# checks the kernels' accesses in the races stage), the host side of every
# cl op running sanitized in ops.cl.*; *.cl_gpu_row: the model suites again
# with the cl backend on the nvidia row's launch shapes, whose host side
# (the same runtime, launch sizes from the row) runs sanitized in the
# suites they twin, and whose kernels, the point of the twin, run inside
# PoCL, uninstrumented (model.cl_gpu_row was 19 s of the sanitized pass).
XO_ASAN_CI_EXCLUDE='^(ci|lint|coverage)\.|^cl\.offline_gpu_compile\.|^keras\.load_in_keras|^sweep\.cl\.|\.cl_gpu_row$'

# XO_WORKLOAD_TESTS: they time real workloads (`xo seed`, `xo bench`, `xo
# probe`'s peak loops) to check what the command line prints, which takes
# ~4x as long under ASan (papercuts.seed_ci: 7.5 s against 34 s), while the
# kernels they time run sanitized in ops.* and model.
XO_WORKLOAD_TESTS='^papercuts\.(seed_ci|seed_model|perf_words|bench_layers|bench_attention_text|bench_attention_json)$|^probe(\.cli)?$'

# XO_PLAIN_NUMERIC_TESTS: the suites whose numbers depend on how the plain
# build compiled the cpu backend's kernels, which are built with
# -ffp-contract=fast (kernels/CMakeLists.txt): GCC forms FMAs at -O2 and
# not at -O1, the sanitized build's level (the cpu backend's predictions of
# the Keras fixtures differ in the last bits between the two builds; the
# reference's, built with contraction off at -O2 in both, and cl's, whose
# arithmetic is PoCL's, do not), so they run in both builds: the cpu op
# suites and sweeps (also at each lower ISA level, XO_ISA_TESTS), the model
# suites (the fused cpu path), the Keras goldens and the gradient checks.
# The other numeric suites (ops.ref.*, ops.cl.*, the cl suites) run
# sanitized only.
XO_PLAIN_NUMERIC_TESTS="$XO_ISA_TESTS|^model(\\.|\$)|^keras\$|^gradcheck\$"
XO_PLAIN_CI_TESTS="$XO_ASAN_CI_EXCLUDE|$XO_WORKLOAD_TESTS|$XO_PLAIN_NUMERIC_TESTS"
# ci/sanitize.sh and the nightly's weekly asan stage run every quick test
# sanitized (XO_ASAN_ALL=1), and the nightly's test stage runs every quick
# test plain (Release), a seventh a night.

stage_asan_test() {
    local envs vars v sel=() quarantine=${XO_ASAN_QUARANTINE_MB:-}
    # CI's pass keeps 64 MB of freed blocks poisoned, not ASan's 256: every
    # model file is read in a forked child (model/h5read.c), and each fork
    # makes the parent fault again on every page it writes afterwards, the
    # quarantine's among them; the keras suite spent 56 s in the kernel at
    # 256 MB and 35 s at 64 (2-core EPYC VM). A use after free is still
    # seen while the last 64 MB freed hold the block; the weekly pass
    # (XO_ASAN_ALL=1) keeps the default.
    [ "${XO_ASAN_ALL:-0}" != 1 ] && [ -z "$quarantine" ] && quarantine=64
    envs=$(XO_ASAN_QUARANTINE_MB=$quarantine xo_asan_env) || return 1
    mapfile -t vars <<<"$envs"
    echo "asan-test: ${vars[*]}"
    if [ "${XO_ASAN_ALL:-0}" != 1 ]; then
        sel=(-E "$XO_ASAN_CI_EXCLUDE|$XO_WORKLOAD_TESTS")
        echo "asan-test: every quick test but $XO_ASAN_CI_EXCLUDE and the workloads" \
            "$XO_WORKLOAD_TESTS, which the test stage runs (XO_ASAN_ALL=1: all)"
    fi
    (
        for v in "${vars[@]}"; do export "${v?}"; done
        xo_ctest asan build-asan -L quick "${sel[@]}" -j"$XO_JOBS" --timeout 600
    )
}

# The fuzz targets (docs/fuzzing.md): a clang build with libFuzzer, ASan and
# UBSan in build-fuzz/, then fuzz/run.sh runs each target for
# $XO_FUZZ_SECONDS (10 in ci/test.sh; ci/nightly.sh: 30 on its night, 120
# in the weekly run). A finding fails
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
    local line i wall=0 cpu=0
    for line in "${XO_SUMMARY[@]}"; do
        echo "$line"
    done
    for i in "${!XO_STAGE_NAME[@]}"; do
        wall=$((wall + XO_STAGE_WALL_MS[i])) cpu=$((cpu + XO_STAGE_CPU_MS[i]))
    done
    printf '%-10s       %4ss  cpu %5ss  (load %s at start, %s now)\n' total $((wall / 1000)) \
        $((cpu / 1000)) "${XO_CI_LOAD_START:-?}" "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
}
