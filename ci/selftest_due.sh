# ci/selftest_due.sh - sourced by ci/test.sh: when its test stage runs the
# mutation tool's own suites (ci.mutgen.*).

# What those suites exercise: the tool (ci/mutate.sh, ci/mutgen.py and its
# equivalents list, the reach map's ci/reach.*, and ci/lib.sh, which
# mutate.sh sources and the suites copy into their projects), their own
# files, and the perf store's files under the runner's `xo perf record`
# and the report's mutant tables (store, SQL, runner, report, query).
XO_MUTGEN_SELFTEST_PATHS='^(ci/(lib\.sh|mutate\.sh|mutgen\.py|mutgen-equivalent\.tsv|reach[._])|perfdb/(perfdb\.h|store|sql|runner|report|query)|suites/ci_mutgen\.sh$|suites/mutgen\.cmake$|suites/mutgen_context/)'

# xo_mutgen_selftest_due: whether ci/test.sh runs the mutation tool's own
# suites. They (ci.mutgen.*: each makes, builds and mutates a small project
# of its own, 100 s of test time, a third of the quick stage's) check ci/mutgen.py, ci/mutate.sh, ci/reach.* and the perf
# store's mutant tables, which a change to the product code leaves as they
# were (and ci/test.sh's mutgen stage runs the tool on the real change every
# time). So they run here when the day's change (HEAD's first-parent
# commits within 24 h of it, as the mutgen stage takes it) touches one of
# XO_MUTGEN_SELFTEST_PATHS, or XO_MUTGEN_SELFTEST=1; otherwise the line
# says so and the nightly's quick shard runs them (each within 7 nights).
# A day's change whose watched files are, byte for byte, a content that has
# already passed these suites on this machine (xo_mutgen_selftest_record,
# after a test stage that ran them passed) does not run them again: the
# next CI of the same day would only repeat that pass.
xo_mutgen_selftest_due() {
    local head_t first="" h t files
    [ "${XO_MUTGEN_SELFTEST:-}" = 1 ] && return 0
    xo_mutgen_selftest_passed && return 1
    head_t=$(git log -1 --format=%ct HEAD 2>/dev/null) || return 0
    while read -r h t; do
        [ $((head_t - t)) -gt 86400 ] && break
        first=$h
    done <<<"$(git log --first-parent --format='%H %ct' HEAD)"
    [ -n "$first" ] || return 0
    if git rev-parse -q --verify "$first^" >/dev/null; then
        files=$(git diff --name-only "$first^" HEAD) || return 0
    else
        return 0 # the first commit: everything is new
    fi
    grep -qE "$XO_MUTGEN_SELFTEST_PATHS" <<<"$files"
}

# The record of the watched files' contents that passed the suites here:
# one hash a line, the newest last.
xo_mutgen_selftest_file() {
    echo "${XO_CACHE_DIR:-$HOME/.cache/crossover}/mutgen-selftest-passed"
}

# xo_mutgen_selftest_hash: a hash of HEAD's watched files (their paths and
# blob ids), empty outside a git tree.
xo_mutgen_selftest_hash() {
    local files
    files=$(git ls-files 2>/dev/null | grep -E "$XO_MUTGEN_SELFTEST_PATHS") || return 0
    git ls-files -s -- $files | sha256sum | cut -d' ' -f1
}

# xo_mutgen_selftest_passed: whether the watched files' content is one the
# record holds.
xo_mutgen_selftest_passed() {
    local h
    h=$(xo_mutgen_selftest_hash)
    [ -n "$h" ] && grep -qxF "$h" "$(xo_mutgen_selftest_file)" 2>/dev/null
}

# xo_mutgen_selftest_record: adds the watched files' content to the record
# (after a test stage that ran the suites passed); the record keeps the
# newest 50.
xo_mutgen_selftest_record() {
    local h f tmp
    h=$(xo_mutgen_selftest_hash)
    [ -n "$h" ] || return 0
    f=$(xo_mutgen_selftest_file)
    mkdir -p "$(dirname "$f")" || return 1
    tmp=$(mktemp "$f.XXXXXX") || return 1
    { grep -vxF "$h" "$f" 2>/dev/null | tail -n 49; echo "$h"; } >"$tmp" && mv "$tmp" "$f"
}
