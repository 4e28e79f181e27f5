#!/usr/bin/env bash
# ci_skips.sh WORK - the skip check of every CI ctest run (ci/lib.sh xo_ctest,
# ci/skips.py) on a real CMake + ctest project made in WORK: a CMocka suite
# with one case that skips after printing more than ctest keeps of a passing
# test's output by default (1024 bytes) and a "[  SKIPPED ] x" line of a
# child process's log, one that prints text without a newline and skips,
# the same suite run with CMOCKA_MESSAGE_OUTPUT=TAP, a test that exits 77
# under SKIP_RETURN_CODE, a test that passes and one that only prints a
# "[  SKIPPED ] x" line. It checks that
#   - an unlisted skip fails the run, naming the test and the case, in
#     CMocka's standard and TAP formats, also with CMOCKA_MESSAGE_OUTPUT=XML
#     in the caller's environment; a "[  SKIPPED ] x" line outside a CMocka
#     case is not a skip;
#   - a passing test whose output ctest cut (its marker, or output of
#     --max-output bytes or more) fails the check: its skips are unseen;
#   - listed skips pass (exact names and a pattern);
#   - an entry for another stage does not allow a skip in this one;
#   - a listed entry whose test ran and did not skip is reported as stale and
#     fails the run; one whose test did not run here is not stale;
#   - a malformed or non-UTF-8 list and a missing results file are bad
#     input (exit 2, one line).
# Output of the inner runs goes to files, never to this test's stdout: CI
# reads that for skipped CMocka cases too.
set -u
work=${1:?usage: ci_skips.sh WORK}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rm -rf "$work" && mkdir -p "$work/src" || exit 1
# shellcheck source=fail_count.sh
. "$(dirname "${BASH_SOURCE[0]}")/fail_count.sh"

cat >"$work/src/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(skipdemo C)
enable_testing()
find_package(PkgConfig REQUIRED)
pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
add_executable(suite suite.c)
target_link_libraries(suite PRIVATE PkgConfig::CMOCKA)
add_test(NAME demo.suite COMMAND suite)
add_test(NAME demo.skipper COMMAND sh -c "echo 'no widget here'; exit 77")
set_tests_properties(demo.skipper PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME demo.plain COMMAND sh -c "echo fine")
add_test(NAME demo.fakeskip COMMAND sh -c "echo '[  SKIPPED ] test_from_child_log'")
add_test(NAME demo.tap COMMAND suite)
set_tests_properties(demo.tap PROPERTIES ENVIRONMENT CMOCKA_MESSAGE_OUTPUT=TAP)
EOF
cat >"$work/src/suite.c" <<'EOF'
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>

static void test_chatty(void **state)
{
	(void)state;
	for (int i = 0; i < 200; i++)
		printf("line %d of output that pushes the summary past 1024 bytes\n", i);
	printf("[  SKIPPED ] test_from_child_log\n");
}

static void test_needs_probe(void **state)
{
	(void)state;
	printf("probing the widget...");
	fflush(stdout);
	skip();
}

static void test_needs_widget(void **state)
{
	(void)state;
	skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chatty),
		cmocka_unit_test(test_needs_widget),
		cmocka_unit_test(test_needs_probe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
EOF
if ! cmake -S "$work/src" -B "$work/build" >"$work/cmake.log" 2>&1 ||
    ! cmake --build "$work/build" >>"$work/cmake.log" 2>&1; then
    sed 's/^/  /' "$work/cmake.log" | tail -n 20
    echo "FAIL: the demo project does not build"
    exit 1
fi

# run_check NAME STAGE LIST [CTEST ARGS...]: xo_ctest on the demo project with
# LIST as the skip list; the exit status in $rc, stdout and stderr in
# $work/NAME.out and $work/NAME.err.
run_check() {
    local name=$1 stage=$2 list=$3
    shift 3
    (
        source "$root/ci/lib.sh"
        XO_SKIPS_LIST=$list xo_ctest "$stage" "$work/build" "$@"
    ) >"$work/$name.out" 2>"$work/$name.err" </dev/null
    rc=$?
}
expect() { # NAME WANT_RC [PATTERN IN STDERR...]
    local name=$1 want=$2 p
    shift 2
    [ "$rc" = "$want" ] || fail "$name: exit $rc, want $want ($(head -c 300 "$work/$name.err" | tr '\n' '|'))"
    for p in "$@"; do
        grep -q -- "$p" "$work/$name.err" || fail "$name: stderr does not say '$p'"
    done
}
tab=$'\t'

: >"$work/empty.tsv"
run_check unlisted quick "$work/empty.tsv"
expect unlisted 1 "not allowed: demo.skipper (ctest: SKIP_RETURN_CODE=77) in stage quick" \
    "not allowed: demo.suite/test_needs_widget (a CMocka case) in stage quick" \
    "not allowed: demo.suite/test_needs_probe (a CMocka case)" \
    "not allowed: demo.tap/test_needs_widget (a CMocka case)" \
    "not allowed: demo.tap/test_needs_probe (a CMocka case)"
grep -q 'test_from_child_log' "$work/unlisted.err" &&
    fail "unlisted: a child's '[  SKIPPED ]' line counted as a skip"
# CMocka's XML format (or any other) in the caller's environment: xo_ctest
# unsets it, so the skips are still seen
CMOCKA_MESSAGE_OUTPUT=XML run_check xml quick "$work/empty.tsv"
expect xml 1 "not allowed: demo.suite/test_needs_widget (a CMocka case) in stage quick" \
    "not allowed: demo.suite/test_needs_probe (a CMocka case)"

printf '# comment\n\ndemo.skipper\tquick,asan\tno widget\tthe widget is elsewhere\n%s\n' \
    "demo.[st]*/test_needs_*${tab}*${tab}no widget${tab}same" >"$work/listed.tsv"
run_check listed quick "$work/listed.tsv"
expect listed 0
grep -q 'skips: stage quick: 5 tests, 5 skips allowed' "$work/listed.out" ||
    fail "listed: no summary line ($(tr '\n' '|' <"$work/listed.out" | tail -c 300))"
# the same results read as if ctest kept only 5000 bytes: demo.suite's
# 12 kB may have lost its skip lines
python3 "$root/ci/skips.py" --stage quick --list "$work/listed.tsv" --max-output 5000 \
    "$work/build/Testing/junit-quick.xml" >"$work/oversize.out" 2>"$work/oversize.err"
rc=$?
expect oversize 1 "output truncated: skips cannot be checked: demo.suite in stage quick"
# ctest really cutting the output: its marker line
XO_CTEST_OUTPUT_MAX=4000 run_check truncated quick "$work/listed.tsv"
expect truncated 1 "output truncated: skips cannot be checked: demo.suite in stage quick"

run_check other_stage races "$work/listed.tsv"
expect other_stage 1 "not allowed: demo.skipper (ctest: SKIP_RETURN_CODE=77) in stage races"
grep -q 'demo.suite/test_needs_widget' "$work/other_stage.err" &&
    fail "other_stage: the '*' entry did not allow the case"

{
    cat "$work/listed.tsv"
    printf 'demo.plain\tquick\tnever\tit used to skip\n'
    printf 'demo.suite/test_chatty\tquick\tnever\tit used to skip\n'
    printf 'demo.gone\tquick\tnever\ta test that no longer exists here\n'
} >"$work/stale.tsv"
run_check stale quick "$work/stale.tsv"
expect stale 1 "stale entry: line 5 demo.plain (stages quick): it ran in stage quick and did not skip" \
    "stale entry: line 6 demo.suite/test_chatty"
grep -q 'demo.gone' "$work/stale.err" && fail "stale: an entry for a test that did not run is stale"

# only demo.plain runs: the entries of the tests that did not run are not stale
run_check subset quick "$work/listed.tsv" -R '^demo\.plain$'
expect subset 0

printf 'demo.skipper quick no tabs\n' >"$work/bad.tsv"
run_check badlist quick "$work/bad.tsv"
expect badlist 1 "bad.tsv:1: want 4 tab-separated fields"
printf 'demo.skipper\tquick\tcaf\351\treason\n' >"$work/latin1.tsv"
python3 "$root/ci/skips.py" --stage quick --list "$work/latin1.tsv" \
    "$work/build/Testing/junit-quick.xml" >"$work/latin1.out" 2>"$work/latin1.err"
rc=$?
expect latin1 2 "latin1.tsv is not UTF-8 text"
[ "$(wc -l <"$work/latin1.err")" = 1 ] || fail "latin1: more than one line on stderr"
python3 "$root/ci/skips.py" --stage quick --list "$work/listed.tsv" "$work/nonexistent.xml" \
    >"$work/nofile.out" 2>"$work/nofile.err"
rc=$?
expect nofile 2 "cannot read the ctest results"
[ "$(wc -l <"$work/nofile.err")" = 1 ] || fail "nofile: more than one line on stderr"

if [ $fails -ne 0 ]; then
    echo "ci_skips: $fails checks failed"
    exit 1
fi
echo "ci_skips: all checks passed"
