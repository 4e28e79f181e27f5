#!/usr/bin/env bash
# ci_mutgen.sh CASE WORK [XO] - the mutant generator (ci/mutgen.py) and the
# runner of its mutants (ci/mutate.sh --from) on a real git repository made
# in WORK: a small C project whose second commit adds code beside comments,
# strings, character literals, a macro, declarations and an error message.
#   generate:    only the lines the change added, in product folders, are
#                mutated; never inside a comment, string, character literal,
#                preprocessor line, declaration or message; a call that only
#                frees (free, fclose, *_free) is never deleted; every operator
#                fires; --per-line 1 gives one mutant a line; every patch
#                applies with git apply and passes ci/mutate.sh --check
#   stable:      the same mutants keep their ids when the lines move
#   equivalents: a survivor marked equivalent carries its reason into the
#                patch; a row without a reason, or a bad id, is exit 2 with
#                one line
#   runner:      ci/mutate.sh --from runs chosen mutants of the project (its
#                own CMake build and ctest): one caught, one caught by a
#                timeout (said so), one stillborn, one survivor with
#                file:line and the mutation, one equivalent with its
#                reason; the results go to table mutant_results of a real
#                perf store and `xo perf report` lists the survivor
#   pending:     a spent --budget leaves the mutants pending, listed in
#                order, and exits 0; with --box-from setup the budget counts
#                from the set-up's end, so the first mutant runs; --trust-baseline takes another build's
#                word for the baseline; an empty --from folder is nothing to run
#   reach:       with a reach map (ci/reach.sh) a mutant runs only the
#                tests that execute its function, after building only their
#                targets; one in a function no test executes is a survivor
#                that runs nothing, named so; a second run reuses the map;
#                a sample runs its mutants cheapest first
#   stale:       reach maps kept by commit in a shared cache: a run at a
#                later commit uses the newest older map, sends a mutant that
#                lives through its tests (or that no test reached then) to its
#                area, where a test that reaches the function since catches
#                it, and runs a test the map does not know with its area's
#                mutants; this tree's own map is used as before; a corrupt
#                or truncated index is refused with one line, the area used
#   listed:      a mutant listed in the equivalents file is counted
#                equivalent without being built or run in a sample (CI);
#                a full run runs it, and caught it is an ERROR (exit 2)
#   stalebin:    a test that runs a binary its command does not name never
#                runs one that holds an earlier mutant (a false kill)
#   noapply:     a stale mutant is an ERROR on the no-test-reaches and the
#                listed-equivalent shortcuts too
#   mapkey:      a map whose done names another tree, or whose table lost
#                a row, is refused with one line (the area runs); a map
#                without its unmapped file maps no races nor ISA pass
#   signals:     what a process entered before a SIGKILL or an execve is in
#                the reach map
#   moved:       a queued mutant whose code moved since is placed by the
#                function it is in now, not its header's
#   kernel:      a mutant in an OpenCL kernel runs the tests that reach
#                its launcher (the host function of its name), then its
#                area; a timeout there (a kernel's first compile) is no kill
#   order:       a mutant that lived through its area when the budget ran
#                out is pending in the order given, before one never started
#   sources:     files that are hard to read: the same call twice on a line
#                (two ids, kept when the line moves), git config and
#                attributes that change git diff's format, #if 0 regions,
#                comments and literals going on past a directive or a
#                backslash-newline, CRLF, Latin-1 bytes, static assertions
#                and aligned declarations, extern "C", no newline at the end,
#                a name with a space: one id a mutant, every patch applies,
#                no compiled-out or commented code mutated; braces opened
#                in both branches of an #ifdef/#else counted once
#   context:     a change git aligns differently with -U0 than with its
#                default context is read (the counts checked are the -U0
#                diff's own)
#   badargs:     ranges of ref names with dots and slashes; a missing,
#                folder or non-UTF-8 --equivalents, an unknown commit, A...B,
#                argparse errors, an --out folder holding other files: one
#                line, exit 2, nothing deleted
# Exit 0 pass, 1 fail.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case=$1 work=$2 xo=${3:-}
fail=0
bad() {
    echo "FAIL $*"
    fail=1
}
rm -rf "$work" && mkdir -p "$work" || exit 1
repo=$work/repo
G=(git -C "$repo" -c user.name=t -c user.email=t@localhost -c commit.gpgsign=false)

# The project: commit A has calc_clamp only; commit B adds the rest of
# core/calc.c (the lines under test) and touches suites/ and docs/, which
# are never mutated.
make_repo() {
    mkdir -p "$repo/core" "$repo/suites" "$repo/docs" "$repo/ci"
    git init -q "$repo"
    cat >"$repo/core/calc.c" <<'EOF'
/* calc.c: the unit the mutants break */
#include <stdbool.h>
#include <stdio.h>
#include "calc.h"

int calc_clamp(int x, int lo, int hi)
{
	if (x < lo)
		return lo;
	if (x > hi)
		return hi;
	return x;
}
EOF
    cat >"$repo/core/calc.h" <<'EOF'
int calc_clamp(int x, int lo, int hi);
int calc_sum(const int *a, int n);
int calc_mean(const int *a, int n);
int calc_flag(int v);
int calc_pick(int x, int lo, int hi);
int calc_count(int n);
EOF
    cat >"$repo/suites/t.c" <<'EOF'
#include "calc.h"
int main(void)
{
	int a[4] = {1, 2, 3, 4};
	return !(calc_clamp(5, 0, 3) == 3 && calc_sum(a, 4) == 10 && calc_mean(a, 4) == 2 &&
	         calc_pick(9, 1, 4) == 4 && calc_count(3) == 3);
}
EOF
    cat >"$repo/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(calc C)
option(XO_WERROR "warnings as errors" OFF)
add_compile_options(-Wall -Wextra)
if(XO_WERROR)
  add_compile_options(-Werror)
endif()
enable_testing()
add_executable(t suites/t.c core/calc.c)
target_include_directories(t PRIVATE core)
add_test(NAME calc COMMAND t)
set_tests_properties(calc PROPERTIES LABELS quick TIMEOUT 5)
EOF
    echo "# calc" >"$repo/docs/calc.md"
    printf '/build*/\n/out/\n' >"$repo/.gitignore"
    cp "$root/ci/mutgen.py" "$root/ci/mutate.sh" "$root/ci/lib.sh" "$repo/ci/"
    "${G[@]}" add -A && "${G[@]}" commit -qm A || return 1
    cat >>"$repo/core/calc.c" <<'EOF'

/* a comment with a < b and x + 1 that no mutant may touch */
static const char *calc_msg = "a < b + 1";
#define CALC_TWICE(x) ((x) * 2)

int calc_sum(const int *a, int n)
{
	int s = 0;
	for (int i = 0; i < n; i++) {
		s += a[i];
	}
	return s;
}

int calc_mean(const int *a, int n)
{
	return calc_sum(a, n) / n;
}

int calc_flag(int v)
{
	char c = '<';
	bool ok = true;
	if (v < 0) {
		v = fprintf(stderr, "calc: %d is negative\n", v);
		return 0;
	}
	if (v == 3 && c == '<')
		fprintf(stderr, "calc: bad value %d of %s\n", v + 1, calc_msg);
	return ok && v != 0;
}

int calc_pick(int x, int lo, int hi)
{
	return calc_clamp(x, lo, hi);
}

int calc_count(int n)
{
	int k = 0;
	while (k < n) {
		k++;
	}
	return k;
}

#include <stdlib.h>

static void calc_buf_free(int *b)
{
	free(b);
}

int calc_first(int n)
{
	int *b = malloc(sizeof(*b));
	FILE *f = tmpfile();
	if (!f) {
		free(b);
		return -1;
	}
	int v = -1;
	if (b) {
		b[0] = n;
		v = b[0];
	}
	fclose(f);
	calc_buf_free(b);
	return v;
}
EOF
    echo "more" >>"$repo/docs/calc.md"
    echo "/* more */" >>"$repo/suites/t.c"
    "${G[@]}" commit -qam B
}

# gen OUT ARGS...: the generator over the repository, into OUT
gen() {
    local out=$1
    shift
    python3 "$repo/ci/mutgen.py" --repo "$repo" --out "$out" "$@" >"$work/gen.out" 2>"$work/gen.err"
}

make_repo || { echo "FAIL cannot make the repository"; exit 1; }
idx() { tail -n +2 "$1/index.tsv"; }

case $case in
generate)
    gen "$work/all" --range HEAD~1..HEAD --per-line 0 || bad "generator exit $?: $(cat "$work/gen.err")"
    cat "$work/gen.out"
    # the lines B added to core/calc.c
    added=$(git -C "$repo" diff -U0 HEAD~1 HEAD -- core/calc.c | sed -n 's/^@@ .* +\([0-9]*\),\([0-9]*\) @@.*/\1 \2/p')
    read -r first count <<<"$added"
    [ -n "$first" ] || bad "no added lines found"
    n=$(idx "$work/all" | wc -l)
    [ "$n" -ge 20 ] || bad "only $n mutants of the added lines"
    while IFS=$'\t' read -r id file line op orig mut; do
        [ "$file" = core/calc.c ] || bad "$id mutates $file (not product code of the change)"
        [ "$line" -ge "$first" ] && [ "$line" -lt $((first + count)) ] ||
            bad "$id mutates line $line, which the change did not add ($orig)"
        case $orig in
        *comment* | *calc_msg\ =* | \#define* | *fprintf* | int\ calc_*)
            bad "$id mutates a comment, string, macro, declaration or message line: $orig -> $mut" ;;
        esac
        case $orig in *"'<'"*) [[ $mut == *"'<'"* ]] || bad "$id changes a character literal: $mut" ;; esac
        # a release call's only effect is freeing: deleting it is a leak
        # that no pass without a leak checker sees
        case $op:$orig in
        delete:*free\(* | delete:*fclose\(*) bad "$id deletes a release call: $orig" ;;
        esac
        [[ $id =~ ^g[0-9a-f]{10}$ ]] || bad "bad id '$id'"
        f=$work/all/$id.patch
        git -C "$repo" apply --check "$f" 2>/dev/null || bad "$id does not apply: $(head -n 3 "$f")"
    done < <(idx "$work/all")
    for op in rel bound arith const index negate delete swap bool return logic; do
        idx "$work/all" | cut -f4 | grep -qx "$op" || bad "no '$op' mutant"
    done
    # the index's rows and the patch files are the same set
    [ "$(ls "$work/all" | grep -c '\.patch$')" = "$n" ] || bad "index and patches differ"
    (cd "$repo" && bash ci/mutate.sh --from "$work/all" --check) || bad "mutate.sh --check refused them"
    gen "$work/one" --range HEAD~1..HEAD || bad "per-line 1: exit $?"
    dup=$(idx "$work/one" | cut -f3 | sort | uniq -d)
    [ -z "$dup" ] || bad "--per-line 1 gave lines $dup more than one mutant"
    [ "$(idx "$work/one" | wc -l)" -ge 9 ] || bad "--per-line 1 gave too few mutants"
    # --first 3: the patches of the first three ids of the full set, byte
    # for byte, and the same index (CI writes its sample so)
    gen "$work/first" --range HEAD~1..HEAD --first 3 || bad "--first 3: exit $?"
    want=$(cd "$work/one" && ls -- *.patch | head -n 3)
    got=$(cd "$work/first" && ls -- *.patch)
    [ "$got" = "$want" ] || bad "--first 3 wrote '$got', want the glob's first three '$want'"
    for f in $got; do
        cmp -s "$work/one/$f" "$work/first/$f" || bad "--first 3: $f differs from the full set's"
    done
    cmp -s "$work/one/index.tsv" "$work/first/index.tsv" || bad "--first 3: the index is not the full set's"
    # a change to suites/ and docs/ only has no mutants, and says so
    "${G[@]}" commit -qm C --allow-empty && echo x >>"$repo/docs/calc.md" && "${G[@]}" commit -qam D
    gen "$work/none" --range HEAD~1..HEAD || bad "docs-only change: exit $?"
    grep -q '^mutgen: 0 mutants' "$work/gen.out" || bad "docs-only change: $(cat "$work/gen.out")"
    # bad input: one line, exit 2
    for a in "--range nope" "--range HEAD..nosuchcommit" "--per-line -1" "--range=-x..HEAD" \
        "--range HEAD~1..HEAD --first -2"; do
        # shellcheck disable=SC2086 # words on purpose
        gen "$work/bad" $a
        rc=$?
        [ $rc = 2 ] && [ "$(wc -l <"$work/gen.err")" = 1 ] || bad "$a: exit $rc, $(cat "$work/gen.err")"
    done
    ;;
stable)
    gen "$work/b" --range HEAD~1..HEAD --per-line 0 || bad "exit $?"
    # move every line of B down by three (a new include block on top)
    sed -i '1a /* moved */\n/* down */\n/* three */' "$repo/core/calc.c"
    "${G[@]}" commit -qam C
    gen "$work/c" --range HEAD~2..HEAD --per-line 0 || bad "exit $?"
    a=$(idx "$work/b" | cut -f1,4,5,6 | sort)
    c=$(idx "$work/c" | cut -f1,4,5,6 | sort)
    [ -n "$a" ] && [ "$a" = "$c" ] || bad "ids changed when the lines moved: $(diff <(echo "$a") <(echo "$c") | head -5)"
    l1=$(idx "$work/b" | sort | head -n 1 | cut -f1,3)
    l2=$(idx "$work/c" | sort | head -n 1 | cut -f1,3)
    [ "${l2#*$'\t'}" = $((${l1#*$'\t'} + 3)) ] || bad "line numbers not moved: $l1 / $l2"
    ;;
equivalents)
    gen "$work/b" --range HEAD~1..HEAD || bad "exit $?"
    row=$(idx "$work/b" | grep -F 'v != 0' | head -n 1)
    id=${row%%$'\t'*}
    [ -n "$id" ] || bad "no mutant of 'return ok && v != 0;'"
    printf '# id\tfile:line\toperator\treason\n%s\tcore/calc.c:1\tx\tcalc_flag is a probe nobody reads\n' \
        "$id" >"$work/eq.tsv"
    gen "$work/b" --range HEAD~1..HEAD --equivalents "$work/eq.tsv" || bad "exit $?"
    grep -qx '# equivalent: calc_flag is a probe nobody reads' "$work/b/$id.patch" ||
        bad "the reason is not in the patch: $(head -n 12 "$work/b/$id.patch")"
    (cd "$repo" && bash ci/mutate.sh --from "$work/b" --list) | grep "^$id " | grep -q 'equivalent: calc_flag' ||
        bad "mutate.sh --list does not show it equivalent"
    for r in "$id	core/calc.c:1	x" "$id	core/calc.c:1	x	 " "nonsense	a:1	x	a reason"; do
        printf '%s\n' "$r" >"$work/eq.tsv"
        gen "$work/b" --range HEAD~1..HEAD --equivalents "$work/eq.tsv"
        rc=$?
        [ $rc = 2 ] && [ "$(wc -l <"$work/gen.err")" = 1 ] && grep -q 'eq.tsv:1' "$work/gen.err" ||
            bad "row '$r': exit $rc, $(cat "$work/gen.err")"
    done
    ;;
runner)
    [ -x "$xo" ] || { echo "FAIL runner needs the xo binary"; exit 1; }
    gen "$work/m" --range HEAD~1..HEAD --per-line 0 || bad "exit $?"
    pick() { idx "$work/m" | awk -F'\t' -v o="$1" -v t="$2" -v m="$3" \
        '$4 == o && index($5, t) && index($6, m) { print $1; exit }'; }
    caught=$(pick arith 's += a[i];' 's -= a[i];')
    hang=$(pick delete 'k++;' '(line deleted)')
    still=$(pick swap 'calc_sum(a, n)' 'calc_sum(n, a)')
    lives=$(pick const 'v == 3' 'v == 4') # calc_flag: no test calls it
    eqv=$(pick rel 'v != 0' 'v == 0')
    for v in caught hang still lives eqv; do [ -n "${!v}" ] || bad "no '$v' mutant in the index"; done
    printf '%s\tcore/calc.c:1\trel\tcalc_flag is never called by anything\n' "$eqv" >"$work/eq.tsv"
    gen "$work/m" --range HEAD~1..HEAD --per-line 0 --equivalents "$work/eq.tsv" || bad "exit $?"
    command -v sqlite3 >/dev/null || { echo "FAIL runner needs sqlite3"; exit 1; }
    "$xo" perf record --db "$work/store.sqlite" --filter '^op/relu/fwd/.*/ref$' --no-progress \
        >/dev/null 2>&1 || bad "xo perf record failed"
    (cd "$repo" && XO_MUTATE_DIR="$work/scratch" XO_REQUIRE_OPENCL=0 bash ci/mutate.sh \
        --from "$work/m" -j 2 --out "$work/res" --db "$work/store.sqlite" \
        "$caught" "$hang" "$still" "$lives" "$eqv") >"$work/run.out" 2>&1
    rc=$?
    cat "$work/run.out"
    [ $rc = 1 ] || bad "exit $rc with a survivor (want 1)"
    res() { awk -F'\t' -v n="$1" '$1 == n { print $7 "|" $8 }' "$work/res/mutgen.tsv"; }
    # core/ has no area of its own in XO_MUTATE_AREAS: its area is the quick pass
    [[ $(res "$caught") == caught\|quick/calc ]] || bad "caught: $(res "$caught")"
    [[ $(res "$hang") == "caught|quick/calc (timeout)" ]] || bad "timeout: $(res "$hang")"
    [[ $(res "$still") == stillborn* ]] || bad "stillborn: $(res "$still")"
    [[ $(res "$lives") == survived\|* ]] || bad "survivor: $(res "$lives")"
    [[ $(res "$eqv") == equivalent\|* ]] || bad "equivalent: $(res "$eqv")"
    line=$(idx "$work/m" | awk -F'\t' -v n="$lives" '$1 == n { print $3 }')
    grep -q "^survivor: $lives core/calc.c:$line const: if (v == 3 && c == '<') -> if (v == 4 && c == '<')\$" "$work/res/mutgen.txt" ||
        bad "mutgen.txt does not list the survivor with file:line: $(cat "$work/res/mutgen.txt")"
    grep -q '^mutgen: caught 2/3 (1 stillborn, 1 equivalent, 0 pending), survived: 1' "$work/res/mutgen.txt" ||
        bad "summary: $(head -n 1 "$work/res/mutgen.txt")"
    got=$(sqlite3 "$work/store.sqlite" "SELECT result || ' ' || file || ':' || line FROM mutant_results ORDER BY result")
    [ "$(wc -l <<<"$got")" = 5 ] && grep -qx "survived core/calc.c:$line" <<<"$got" || bad "store: $got"
    if command -v gnuplot >/dev/null; then
        "$xo" perf report --db "$work/store.sqlite" --out "$work/rep" >/dev/null 2>&1 || bad "report failed"
        grep -q 'generated mutants' "$work/rep/index.html" &&
            grep -q "core/calc.c:$line</td>" "$work/rep/index.html" &&
            grep -q 'equivalent: calc_flag is never called by anything' "$work/rep/index.html" ||
            bad "the report does not list the survivor and the equivalent one"
        # with a survivor listed, the table does not also say there is none
        ! grep -q 'none: every mutant that built was caught' "$work/rep/index.html" ||
            bad "the report lists a survivor and says every mutant was caught"
    fi
    ;;
pending)
    # a budget spent before the first mutant: every one is pending, listed
    # in the order given for the next run, and that is not a failure. The
    # budget counts from the run's start in whole seconds and a build of
    # this project can take under one, so a target that every build runs
    # makes the scratch tree's build take 1.5 s: spent, whatever the machine
    cat >>"$repo/CMakeLists.txt" <<'EOF2'
add_custom_target(slow_build ALL COMMAND ${CMAKE_COMMAND} -E sleep 1.5)
EOF2
    "${G[@]}" commit -qam slow || bad "commit the slow build"
    gen "$work/m" --range HEAD~2..HEAD~1 --per-line 0 || bad "exit $?"
    names=$(idx "$work/m" | cut -f1 | sort -r | head -n 4)
    # shellcheck disable=SC2086 # ids are words
    (cd "$repo" && XO_MUTATE_DIR="$work/scratch" bash ci/mutate.sh --from "$work/m" -j 2 \
        --budget 1 --out "$work/res" $names) >"$work/run.out" 2>&1
    rc=$?
    cat "$work/run.out"
    [ $rc = 0 ] || bad "exit $rc with everything pending (want 0)"
    [ "$(cat "$work/res/mutgen-pending.txt")" = "$names" ] ||
        bad "pending list: $(cat "$work/res/mutgen-pending.txt")"
    grep -q '^mutgen: caught 0/0 (0 stillborn, 0 equivalent, 4 pending), survived: 0' "$work/res/mutgen.txt" &&
        grep -q '^pending: 4 not run in the 1s budget' "$work/res/mutgen.txt" ||
        bad "summary: $(cat "$work/res/mutgen.txt")"
    # --box-from setup: the box counts from the end of the set-up (the
    # 1.5 s build above spent the whole budget), so the first mutant still
    # runs; its own build, 1.5 s again, spends the budget, so the other
    # three never start, and the first, if it lived through its area, is
    # pending too (first, as the order case says)
    # shellcheck disable=SC2086 # ids are words
    (cd "$repo" && XO_MUTATE_DIR="$work/scratch" bash ci/mutate.sh --from "$work/m" -j 2 \
        --budget 1 --box-from setup --out "$work/res3" $names) >"$work/run3.out" 2>&1
    rc=$?
    cat "$work/run3.out"
    [ $rc != 2 ] || bad "--box-from setup: exit 2"
    grep -q '^mutate: set-up took [0-9]*s; the box counts from here' "$work/run3.out" ||
        bad "--box-from setup does not say what the set-up took"
    first=$(head -n 1 <<<"$names")
    grep -Eq "^$first +(caught|lived|stillborn) " "$work/run3.out" ||
        bad "--box-from setup: the first mutant did not run"
    [ "$(grep -cE '^g[0-9a-f]+ +(caught|lived|stillborn) ' "$work/run3.out")" = 1 ] ||
        bad "--box-from setup: more than one mutant started in a 1 s box"
    [ "$(tail -n +2 "$work/res3/mutgen-pending.txt")" = "$(tail -n +2 <<<"$names")" ] ||
        bad "--box-from setup: pending list: $(cat "$work/res3/mutgen-pending.txt")"
    out=$(cd "$repo" && bash ci/mutate.sh --from "$work/m" --box-from later 2>&1)
    [ $? = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] || bad "--box-from later: $out"
    # --trust-baseline: a build of the same tree that ran its tests gives
    # the test times (a pass's time limit) and stands for the baseline
    cmake -S "$repo" -B "$work/ci-build" >/dev/null 2>&1 && cmake --build "$work/ci-build" >/dev/null 2>&1 &&
        ctest --test-dir "$work/ci-build" >/dev/null 2>&1 || bad "the trusted build failed"
    one=$(idx "$work/m" | awk -F'\t' '$5 == "s += a[i];" && $4 == "arith" { print $1; exit }')
    (cd "$repo" && XO_MUTATE_DIR="$work/scratch" bash ci/mutate.sh --from "$work/m" -j 2 \
        --trust-baseline "$work/ci-build" --out "$work/res2" "$one") >"$work/run2.out" 2>&1
    rc=$?
    cat "$work/run2.out"
    [ $rc = 0 ] && grep -q "^$one *caught *quick/calc" "$work/run2.out" &&
        grep -q 'trusted to pass unmutated' "$work/run2.out" || bad "trusted run: exit $rc"
    # an empty folder: nothing to run, exit 0
    mkdir -p "$work/empty"
    out=$(cd "$repo" && bash ci/mutate.sh --from "$work/empty" 2>&1)
    [ $? = 0 ] && [[ $out == *"nothing to run"* ]] || bad "empty folder: $out"
    ;;
reach)
    # a second test, `other`, runs its own program that calls calc_clamp,
    # and calc_count in a child that, as model/h5read.c's sandboxed reader,
    # may create no file nor write one, and ends with _exit
    cp "$root/ci/reach.sh" "$root/ci/reach.py" "$root/ci/reach_rt.c" "$repo/ci/"
    cat >"$repo/suites/o.c" <<'EOF'
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "calc.h"
int main(void)
{
	int st = 1;
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit z = {0, 0};
		setrlimit(RLIMIT_FSIZE, &z);
		setrlimit(RLIMIT_NOFILE, &z);
		_exit(calc_count(3) != 3);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	return st != 0 || calc_clamp(1, 0, 2) != 1;
}
EOF
    cat >>"$repo/CMakeLists.txt" <<'EOF'
add_executable(o suites/o.c core/calc.c)
target_include_directories(o PRIVATE core)
add_test(NAME other COMMAND o)
set_tests_properties(other PROPERTIES LABELS quick TIMEOUT 5)
EOF
    gen "$work/m" --range HEAD~1..HEAD --per-line 0 || bad "exit $?"
    pick() { idx "$work/m" | awk -F'\t' -v o="$1" -v t="$2" -v m="$3" \
        '$4 == o && index($5, t) && index($6, m) { print $1 "\t" $7; exit }'; }
    IFS=$'\t' read -r caught cfn <<<"$(pick arith 's += a[i];' 's -= a[i];')"
    IFS=$'\t' read -r lives lfn <<<"$(pick const 'v == 3' 'v == 4')"
    [ "$cfn" = calc_sum ] && [ "$lfn" = calc_flag ] || bad "index functions: '$cfn' '$lfn' (want calc_sum, calc_flag)"
    grep -qx '# function: calc_sum' "$work/m/$caught.patch" || bad "no '# function:' in the patch"
    (cd "$repo" && XO_MUTATE_DIR="$work/scratch" XO_REQUIRE_OPENCL=0 bash ci/mutate.sh \
        --from "$work/m" -j 2 --out "$work/res" "$caught" "$lives") >"$work/run.out" 2>&1
    rc=$?
    cat "$work/run.out"
    [ $rc = 1 ] || bad "exit $rc with a survivor (want 1)"
    grep -q 'reach map built' "$work/run.out" || bad "no reach map was built"
    res() { awk -F'\t' -v n="$1" '$1 == n { print $7 "|" $8 "|" $9 }' "$work/res/mutgen.tsv"; }
    [[ $(res "$caught") == caught\|quick/calc\|* ]] || bad "caught: $(res "$caught")"
    [ "$(res "$lives")" = "survived|(no test reaches calc_flag)|0" ] || bad "unreached: $(res "$lives")"
    # only `calc` reaches calc_sum: `other` neither runs nor is rebuilt
    log=$work/scratch/logs/$caught
    grep -q '^==== pass quick: ctest -R ^(calc)\$' "$log.test.log" && ! grep -q 'other' "$log.test.log" ||
        bad "the selected tests: $(grep -e '====' -e 'Test *#' "$log.test.log")"
    grep -q 'Built target t' "$log.build.log" && ! grep -q 'target o' "$log.build.log" ||
        bad "the targets built: $(grep target "$log.build.log")"
    [ ! -e "$work/scratch/logs/$lives.test.log" ] || bad "a mutant no test reaches ran tests"
    grep -q "^survivor: $lives .* (no test reaches calc_flag)\$" "$work/res/mutgen.txt" ||
        bad "mutgen.txt: $(cat "$work/res/mutgen.txt")"
    # the map: what a sandboxed child ended by _exit ran counts, and the
    # test passed there
    grep -qx $'quick\tother\tcore/calc.c\tcalc_count' "$work"/scratch/reach/*/reach.tsv ||
        bad "the map misses the child's calc_count: $(cat "$work"/scratch/reach/*/reach.tsv)"
    [ "$(awk -F'\t' '$2 == "other" { print $4 }' "$work"/scratch/reach/*/tests.tsv)" = ok ] ||
        bad "other failed in the map's build: $(cat "$work"/scratch/reach/*/tests.tsv)"
    # a second run takes the map from the cache
    (cd "$repo" && XO_MUTATE_DIR="$work/scratch" XO_REQUIRE_OPENCL=0 bash ci/mutate.sh \
        --from "$work/m" -j 2 --reach use --out "$work/res2" "$caught") >"$work/run2.out" 2>&1
    grep -q 'reach map of this tree:' "$work/run2.out" &&
        [ "$(awk -F'\t' -v n="$caught" '$1 == n { print $7 }' "$work/res2/mutgen.tsv")" = caught ] ||
        bad "cached map: $(cat "$work/run2.out")"
    # a sample runs its mutants cheapest first by their tests' baseline
    # times: the one no test reaches (nothing to run) before the one that
    # `calc` reaches, whichever id sorts first
    mkdir -p "$work/two"
    cp "$work/m/$caught.patch" "$work/m/$lives.patch" "$work/two/"
    (cd "$repo" && XO_MUTATE_DIR="$work/scratch" XO_REQUIRE_OPENCL=0 bash ci/mutate.sh \
        --from "$work/two" -j 2 --reach use --sample 2 --offset 0 --out "$work/res3") >"$work/run3.out" 2>&1
    [ "$(grep -oE '^g[0-9a-f]{10}' "$work/run3.out" | tr '\n' ' ')" = "$lives $caught " ] ||
        bad "a sample's order, want $lives then $caught: $(cat "$work/run3.out")"
    # an empty cost file orders by nothing but still runs the whole sample
    : >"$work/scratch/baseline-cost.txt"
    (cd "$repo" && XO_MUTATE_DIR="$work/scratch" XO_REQUIRE_OPENCL=0 bash ci/mutate.sh \
        --from "$work/two" -j 2 --reach use --sample 2 --offset 0 --out "$work/res4") >"$work/run4.out" 2>&1
    grep -q '2 of 2 generated mutants' "$work/res4/mutgen.txt" ||
        bad "an empty cost file emptied the sample: $(cat "$work/run4.out")"
    ;;
stale)
    # maps kept by commit in a cache every scratch tree shares: a map made
    # at commit C serves a run at D (one commit later, a new test and a test
    # that reaches more), is replaced by D's own, and a corrupt index is
    # refused
    cp "$root/ci/reach.sh" "$root/ci/reach.py" "$root/ci/reach_rt.c" "$repo/ci/"
    gen "$work/m" --range HEAD~1..HEAD --per-line 0 || bad "exit $?"
    pick() { idx "$work/m" | awk -F'\t' -v o="$1" -v t="$2" -v m="$3" \
        '$4 == o && index($5, t) && index($6, m) { print $1; exit }'; }
    X=$(pick rel 'return ok && v != 0;' 'v == 0') # calc_flag(5) returns 0
    Y=$(pick const 'v == 3' 'v == 4')             # only what is printed changes
    Z=$(pick return 'int *b = malloc' 'return 0;') # calc_first returns 0
    [ -n "$X" ] && [ -n "$Y" ] && [ -n "$Z" ] || bad "mutants not found: '$X' '$Y' '$Z'"
    # commit C: `weak` runs calc_flag and checks nothing; `other` checks
    # calc_clamp only
    printf '#include "calc.h"\nint main(void)\n{\n\tcalc_flag(5);\n\treturn 0;\n}\n' >"$repo/suites/w.c"
    printf '#include "calc.h"\nint main(void)\n{\n\treturn calc_clamp(1, 0, 2) != 1;\n}\n' >"$repo/suites/o.c"
    cat >>"$repo/CMakeLists.txt" <<'EOF2'
foreach(n w o)
  add_executable(${n} suites/${n}.c core/calc.c)
  target_include_directories(${n} PRIVATE core)
endforeach()
add_test(NAME weak COMMAND w)
add_test(NAME other COMMAND o)
set_tests_properties(weak other PROPERTIES LABELS quick TIMEOUT 5)
EOF2
    "${G[@]}" add -A && "${G[@]}" commit -qm C
    C=$("${G[@]}" rev-parse HEAD)
    mrun() { # SCRATCH OUT REACH MUTANT...: a run as a fresh clone's, the cache shared
        local s=$1 o=$2 r=$3
        shift 3
        (cd "$repo" && XO_MUTATE_DIR="$work/$s" XO_REACH_CACHE="$work/cache" XO_REQUIRE_OPENCL=0 \
            bash ci/mutate.sh --from "$work/m" -j 2 --reach "$r" --out "$work/$o" "$@") >"$work/$o.out" 2>&1
    }
    res() { awk -F'\t' -v n="$2" '$1 == n { print $7 "|" $8 }' "$work/$1/mutgen.tsv"; }
    mrun s1 r1 auto "$Y"
    cmap=$(cd "$work/cache" && ls -d ./*/done)
    [ "$(cat "$work/cache/index.tsv" 2>/dev/null)" = "$C"$'\t'"$(basename "$(dirname "$cmap")")" ] ||
        bad "index after C's map: $(cat "$work/cache/index.tsv" 2>&1; ls "$work/cache"; cat "$work/r1.out")"
    # commit D: `other` now checks calc_flag(5) too; `flagt` is new
    printf '#include "calc.h"\nint main(void)\n{\n\treturn calc_clamp(1, 0, 2) != 1 || calc_flag(5) != 1;\n}\n' \
        >"$repo/suites/o.c"
    printf '#include "calc.h"\nint main(void)\n{\n\treturn calc_first(7) != 7;\n}\n' >"$repo/suites/f.c"
    printf 'int calc_first(int n);\n' >>"$repo/core/calc.h"
    cat >>"$repo/CMakeLists.txt" <<'EOF2'
add_executable(f suites/f.c core/calc.c)
target_include_directories(f PRIVATE core)
add_test(NAME flagt COMMAND f)
set_tests_properties(flagt PROPERTIES LABELS quick TIMEOUT 5)
EOF2
    "${G[@]}" add -A && "${G[@]}" commit -qm D
    # (a) C's map at D: X lives through what the map selects (weak, and
    # flagt, which the map does not know: 2 tests) and its area catches it by
    # `other`; Z is in a function no test reached at C: its area, flagt
    mrun s2 r2 use "$X" "$Z"
    rc=$?
    grep -qx "reach map: older by 1 commit(s) (commit ${C:0:12})" "$work/r2.out" &&
        grep -qx "reach map: older by 1 commit(s) (commit ${C:0:12})" "$work/r2/mutgen-map.txt" ||
        bad "older map not used: $(cat "$work/r2.out")"
    [ $rc = 0 ] || bad "exit $rc at D with C's map (want 0: all caught)"
    grep -q "^$X .*(older map: 2 test(s); to its area)" "$work/r2.out" ||
        bad "X not confirmed on its area: $(cat "$work/r2.out")"
    [ "$(res r2 "$X")" = "caught|quick/other" ] || bad "X: $(res r2 "$X")"
    [ "$(res r2 "$Z")" = "caught|quick/flagt" ] || bad "Z: $(res r2 "$Z")"
    grep -q '^mutate: 1 test(s) the older map does not know' "$work/r2.out" || bad "no word of flagt"
    # (b) D's own map: built, indexed after C's, used as today (X by the
    # tests that reach calc_flag now, Y lives through them)
    mrun s3 r3 auto "$X" "$Y"
    grep -q '^reach map: exact' "$work/r3/mutgen-map.txt" && grep -q 'reach map of this tree:' "$work/r3.out" ||
        bad "exact map: $(cat "$work/r3.out")"
    [ "$(cut -f1 "$work/cache/index.tsv" | tr '\n' ' ')" = "$C $("${G[@]}" rev-parse HEAD) " ] ||
        bad "index: $(cat "$work/cache/index.tsv")"
    [[ $(res r3 "$X") == caught\|quick/other ]] && grep -q "^$X .*(reach: 2 test(s))" "$work/r3.out" ||
        bad "X with D's map: $(res r3 "$X") $(cat "$work/r3.out")"
    [ "$(res r3 "$Y")" = "survived|(lived through the 2 test(s) that reach calc_flag)" ] ||
        bad "Y with D's map: $(res r3 "$Y")"
    # (c) commit E, its index cut short or garbled: refused with one line,
    # the area used
    echo "/* E */" >>"$repo/suites/f.c" && "${G[@]}" commit -qam E
    for how in cut garble; do
        cp "$work/cache/index.tsv" "$work/index.good"
        if [ $how = cut ]; then head -c -7 "$work/index.good" >"$work/cache/index.tsv"; else
            printf 'not a map\n' >>"$work/cache/index.tsv"; fi
        mrun "s4$how" "r4$how" use "$Z"
        rc=$?
        [ $rc = 0 ] && [ "$(grep -c '^mutate: .*corrupt' "$work/r4$how.out")" = 1 ] &&
            grep -q "^mutate: reach map index $work/cache/index.tsv is corrupt at line [23]: refused" "$work/r4$how.out" &&
            grep -qx 'reach map: none (corrupt index refused)' "$work/r4$how/mutgen-map.txt" &&
            grep -q "^$Z .*(area)\$" "$work/r4$how.out" ||
            bad "$how index (exit $rc): $(cat "$work/r4$how.out")"
        cp "$work/index.good" "$work/cache/index.tsv"
    done
    ;;
listed)
    # a mutant that calc's test catches, listed as equivalent: not run by a
    # sample, run and an ERROR in a full run
    gen "$work/m" --range HEAD~1..HEAD --per-line 0 || bad "exit $?"
    one=$(idx "$work/m" | awk -F'\t' '$5 == "s += a[i];" && $4 == "arith" { print $1; exit }')
    printf '%s\tcore/calc.c:1\tarith\ta listed reason\n' "$one" >"$work/eq.tsv"
    gen "$work/m" --range HEAD~1..HEAD --per-line 0 --equivalents "$work/eq.tsv" || bad "exit $?"
    # a sample (CI) of one: the window at the listed mutant
    off=$(find "$work/m" -name '*.patch' -printf '%f\n' | LC_ALL=C sort | grep -nx "$one.patch" | cut -d: -f1)
    (cd "$repo" && XO_MUTATE_DIR="$work/scratch" XO_REQUIRE_OPENCL=0 bash ci/mutate.sh \
        --from "$work/m" -j 2 --reach off --sample 1 --offset $((off - 1)) --out "$work/res") >"$work/run.out" 2>&1
    rc=$?
    cat "$work/run.out"
    [ $rc = 0 ] || bad "exit $rc (want 0: an equivalent mutant is no survivor)"
    got=$(awk -F'\t' -v n="$one" '$1 == n { print $7 "|" $8 "|" $9 "|" $10 }' "$work/res/mutgen.tsv")
    [ "$got" = "equivalent|(listed equivalent: not run)|0|a listed reason" ] || bad "row: $got"
    [ ! -e "$work/scratch/logs/$one.test.log" ] && [ ! -e "$work/scratch/logs/$one.build.log" ] ||
        bad "the listed mutant was built or run"
    grep -q '^mutgen: caught 0/0 (0 stillborn, 1 equivalent, 0 pending), survived: 0' "$work/res/mutgen.txt" ||
        bad "summary: $(head -n 1 "$work/res/mutgen.txt")"
    # a full run (no --sample: the nightly's) runs it; caught, the list is
    # wrong: an ERROR of the stage
    (cd "$repo" && XO_MUTATE_DIR="$work/scratch" XO_REQUIRE_OPENCL=0 bash ci/mutate.sh \
        --from "$work/m" -j 2 --reach off --out "$work/full" "$one") >"$work/full.out" 2>&1
    rc=$?
    cat "$work/full.out"
    [ $rc = 2 ] && grep -qx "ERROR: $one listed as equivalent but caught: remove it from ci/mutgen-equivalent.tsv" \
        "$work/full/mutgen.txt" || bad "a caught listed mutant in a full run: exit $rc (want 2 and the ERROR line)"
    [ "$(awk -F'\t' -v n="$one" '$1 == n { print $7 "|" $8 }' "$work/full/mutgen.tsv")" = "caught-equivalent|quick/calc" ] ||
        bad "full run row: $(cat "$work/full/mutgen.tsv")"
    ;;
order)
    # `slow` (6 s) is in every mutant's area (core/: the quick pass); the
    # first run builds the scratch tree, so the second starts its first
    # mutant at once, well inside the 4 s budget, and that mutant lives
    # through its area (calc_flag: no test calls it) past the budget
    cat >>"$repo/CMakeLists.txt" <<'EOF'
add_test(NAME slow COMMAND ${CMAKE_COMMAND} -E sleep 6)
set_tests_properties(slow PROPERTIES LABELS quick TIMEOUT 20)
EOF
    gen "$work/m" --range HEAD~1..HEAD --per-line 0 || bad "exit $?"
    lives=$(idx "$work/m" | awk -F'\t' '$4 == "const" && index($5, "v == 3") { print $1; exit }')
    other=$(idx "$work/m" | awk -F'\t' '$4 == "arith" && $5 == "s += a[i];" { print $1; exit }')
    (cd "$repo" && XO_MUTATE_DIR="$work/scratch" XO_REQUIRE_OPENCL=0 bash ci/mutate.sh \
        --from "$work/m" -j 2 --reach off --out "$work/res0" "$other") >"$work/run0.out" 2>&1 ||
        bad "the first run: $(cat "$work/run0.out")"
    (cd "$repo" && XO_MUTATE_DIR="$work/scratch" XO_REQUIRE_OPENCL=0 bash ci/mutate.sh \
        --from "$work/m" -j 2 --reach off --budget 4 --out "$work/res" "$lives" "$other") >"$work/run.out" 2>&1
    rc=$?
    cat "$work/run.out"
    [ $rc = 0 ] || bad "exit $rc (want 0: pending is no failure)"
    grep -q "^$lives .*lived" "$work/run.out" || bad "$lives did not start and live through its area"
    [ "$(cat "$work/res/mutgen-pending.txt")" = "$lives"$'\n'"$other" ] ||
        bad "pending list, want $lives then $other: $(cat "$work/res/mutgen-pending.txt")"
    ;;
kernel)
    # ci/reach.py select on a map whose tables are written here: a mutant
    # in an OpenCL kernel gets the tests that reach the host function of
    # the kernel's own name, cheapest first, as `confirm` (one that lives
    # runs its area); a kernel without such a function, and one whose
    # launcher no test reaches, keep the area
    m=$work/map
    mkdir -p "$m"
    printf 'quick\tmodel\t9.00\tok\nquick\tops.cl.k.fwd\t0.30\tok\nquick\tother\t1.00\tok\n' >"$m/tests.tsv"
    printf '%s\n' $'quick\tmodel\tcl/cl_ops.c\txo_cl_k_fwd' $'quick\tops.cl.k.fwd\tcl/cl_ops.c\txo_cl_k_fwd' \
        $'quick\tother\tcore/calc.c\tcalc_sum' >"$m/reach.tsv"
    printf '%s\n' $'cl/cl_ops.c\txo_cl_k_fwd' $'cl/cl_ops.c\txo_cl_idle' $'core/calc.c\tcalc_sum' >"$m/funcs.tsv"
    echo key >"$m/done"
    out=$(printf '%s\n' $'g1\tcl/kernels/k.cl\txo_cl_k_fwd' $'g2\tcl/kernels/k.cl\txo_cl_tiled' \
        $'g3\tcl/kernels/k.cl\txo_cl_idle' | python3 "$root/ci/reach.py" select --map "$m")
    want=$'g1\tconfirm\tquick\tops.cl.k.fwd\t0.30\ng1\tconfirm\tquick\tmodel\t9.00'
    want+=$'\ng2\tarea\tOpenCL kernel code: the map cannot see it'
    want+=$'\ng3\tarea\tOpenCL kernel code: no test reaches its launcher'
    [ "$out" = "$want" ] || bad "select of kernel mutants: $out"
    # end to end: a kernel file the build embeds in cl/host.c, whose
    # launcher xo_cl_k_fwd the tests `launch` (which never looks at the
    # kernel, and on a changed kernel first "compiles" it for 4 s, past
    # its pass's cap at XO_MUTGEN_SLACK=2) and `klen` (the kernel's
    # length) reach; only `cl.src` (in the cl area: it compares the kernel
    # with a copy) sees a change of the same length
    cp "$root/ci/reach.sh" "$root/ci/reach.py" "$root/ci/reach_rt.c" "$repo/ci/"
    mkdir -p "$repo/cl/kernels"
    cat >"$repo/cl/kernels/k.cl" <<'EOF2'
__kernel void xo_cl_k_fwd(__global int *y, int n)
{
	int i = get_global_id(0);
	if (i < n)
		y[i] = i * 3;
}
EOF2
    cp "$repo/cl/kernels/k.cl" "$repo/suites/k.copy"
    cat >"$repo/cl/embed.cmake" <<'EOF2'
file(READ ${IN} s)
string(HEX "${s}" h)
string(REGEX REPLACE "(..)" "0x\\1," h "${h}")
file(WRITE ${OUT} "static const unsigned char k_src[] = {${h} 0};\n")
EOF2
    cat >"$repo/cl/host.c" <<'EOF2'
#include <string.h>
#include "k_src.h"
const char *xo_cl_src(void) { return (const char *)k_src; }
int xo_cl_k_fwd(int n) { return n > 0 ? (int)strlen((const char *)k_src) : 0; }
EOF2
    cat >"$repo/suites/k.c" <<'EOF2'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
const char *xo_cl_src(void);
int xo_cl_k_fwd(int n);
static char copy[4096];
int main(int argc, char **argv)
{
	FILE *f = argc > 2 ? fopen(argv[2], "rb") : NULL;
	size_t k = f ? fread(copy, 1, sizeof(copy) - 1, f) : 0;
	if (f)
		fclose(f);
	copy[k] = 0;
	if (!strcmp(argv[1], "launch")) {
		if (strcmp(copy, xo_cl_src()))
			sleep(3);
		return xo_cl_k_fwd(0) != 0;
	}
	if (!strcmp(argv[1], "klen"))
		return xo_cl_k_fwd(1) != (int)k;
	return strcmp(copy, xo_cl_src()) != 0;
}
EOF2
    cat >>"$repo/CMakeLists.txt" <<'EOF2'
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/k_src.h
  COMMAND ${CMAKE_COMMAND} -DIN=${CMAKE_SOURCE_DIR}/cl/kernels/k.cl -DOUT=${CMAKE_BINARY_DIR}/k_src.h
          -P ${CMAKE_SOURCE_DIR}/cl/embed.cmake
  DEPENDS ${CMAKE_SOURCE_DIR}/cl/kernels/k.cl ${CMAKE_SOURCE_DIR}/cl/embed.cmake)
add_executable(k suites/k.c cl/host.c ${CMAKE_BINARY_DIR}/k_src.h)
target_include_directories(k PRIVATE ${CMAKE_BINARY_DIR})
add_test(NAME launch COMMAND k launch ${CMAKE_SOURCE_DIR}/suites/k.copy)
add_test(NAME klen COMMAND k klen ${CMAKE_SOURCE_DIR}/suites/k.copy)
add_test(NAME cl.src COMMAND k src ${CMAKE_SOURCE_DIR}/suites/k.copy)
set_tests_properties(launch klen cl.src PROPERTIES LABELS quick TIMEOUT 20)
EOF2
    "${G[@]}" add -A && "${G[@]}" commit -qm kernel || bad "commit the kernel"
    gen "$work/k" --range HEAD~1..HEAD --per-line 0 || bad "exit $?: $(cat "$work/gen.err")"
    kpick() { idx "$work/k" | awk -F'\t' -v t="$1" -v m="$2" \
        '$2 == "cl/kernels/k.cl" && index($5, t) && index($6, m) { print $1; exit }'; }
    longer=$(kpick 'if (i < n)' 'if (i <= n)')
    same=$(kpick 'y[i] = i * 3;' 'y[i] = i * 4;')
    [ -n "$longer" ] && [ -n "$same" ] || bad "no kernel mutants: $(idx "$work/k")"
    kres() { awk -F'\t' -v n="$1" '$1 == n { print $7 "|" $8 }' "$work/$2/mutgen.tsv"; }
    # one kernel length longer: caught by klen among its launcher's tests
    (cd "$repo" && XO_MUTATE_DIR="$work/scratch" XO_REACH_CACHE="$work/cache" \
        XO_REQUIRE_OPENCL=0 bash ci/mutate.sh --from "$work/k" -j 2 --out "$work/kres" \
        "$longer") >"$work/krun.out" 2>&1
    rc=$?
    cat "$work/krun.out"
    [ $rc = 0 ] && [ "$(kres "$longer" kres)" = "caught|quick/klen" ] ||
        bad "the longer kernel: exit $rc, $(kres "$longer" kres)"
    # the same length: `launch` runs past its cap (the compile), which is
    # no kill; it goes to its area, where cl.src catches it
    (cd "$repo" && XO_MUTATE_DIR="$work/scratch" XO_REACH_CACHE="$work/cache" XO_MUTGEN_SLACK=2 \
        XO_REQUIRE_OPENCL=0 bash ci/mutate.sh --from "$work/k" -j 2 --out "$work/kres2" \
        "$same") >"$work/krun2.out" 2>&1
    rc=$?
    cat "$work/krun2.out"
    [ $rc = 0 ] && grep -q "^$same .*(kernel: its launcher's 2 test(s); to its area)" "$work/krun2.out" &&
        [ "$(kres "$same" kres2)" = "caught|area-cl/cl.src" ] ||
        bad "the same-length kernel: exit $rc, $(kres "$same" kres2)"
    [ -f "$work/scratch/logs/$same.reach.test.log" ] || bad "the launcher tests' log was not kept"
    ;;
sources)
    # each sample is a file a change adds, in a repository of its own
    S=$work/src
    mkdir -p "$S"
    cat >"$S/dup.c" <<'EOF'
int g(int a, int b);
int f(int a, int b)
{
	int x = 0;
	x = g(a, b) + g(a, b);
	return x;
}
EOF
    cat >"$S/if0.c" <<'EOF'
int f(int a, int b)
{
	int x = 0;
#if 0
	x = a < b; /* dead0 */
#else
	x = a > b;
#endif
#if 1
	x = x + 1;
#else
	x = a * b; /* dead1 */
#endif
#if 0
#if X
	x = a - b; /* dead2 */
#endif
#elif defined(Y)
	x = x * 3;
#endif
	return x;
}
EOF
    printf '%s\n' '#define LIMIT 8 /* a comment that' '   goes on: if (a < b) { x = y + 1; } dead3 */' \
        'static const char *m = "a \' '    if (x < 1) y = 2; dead4";' 'int f(int a, int b)' '{' \
        '	int x = 0; // a comment \' '	x = a + 1; // dead5' '	x = x * a;' \
        '	return x < b;' '}' >"$S/cmt.c"
    printf '%s\r\n' 'int f(int a, int b)' '{' '	int x = 0;' '#define M(p) do { \' \
        '		p = p + 1; /* dead6 */ \' '	} while (0)' '	x = a + b;' '	return x;' '}' >"$S/crlf.c"
    printf 'int f(int a, int b)\n{\n\t/* caf\351 */\n\tint x = 0;\n\tx = a + b;\n\treturn x;\n}\n' \
        >"$S/latin1.c"
    cat >"$S/decl.c" <<'EOF'
#include <assert.h>
int f(int a)
{
	int n = a + 1;
	_Alignas(32) float buf[16]; /* dead7 */
	__attribute__((aligned(64))) double acc[8]; /* dead8 */
	static_assert(sizeof(buf) == 64, "size"); /* dead9 */
	_Static_assert(sizeof(acc) == 64, "size"); /* dead10 */
	buf[0] = acc[0] = 1;
	return n + (int)buf[0] + (int)acc[0];
}
EOF
    printf '%s\n' '#ifdef __cplusplus' 'extern "C" {' '#endif' \
        '_Static_assert(sizeof(int) == 4, "int"); /* dead11 */' 'XO_STATIC_ASSERT(XO_MAX == 8); /* dead12 */' \
        'int xo_g(int a, int b);' '#ifdef __cplusplus' '}' '#endif' >"$S/h.h"
    printf '%s\n' 'int f(int a, int b)' '{' '	int x = a * b;' '	x = a + b;' '	return x;' '}' >"$S/nonl.c"
    printf 'int g(int a) { return a - 2; }' >>"$S/nonl.c"
    cp "$S/nonl.c" "$S/my dir.c"
    # onefile NAME FILE: a repository in $work/NAME whose second commit adds
    # core/FILE; its mutants go to $work/NAME.out
    onefile() {
        local r=$work/$1 f=$2
        rm -rf "$r" && git init -q "$r" && echo base >"$r/README" &&
            git -C "$r" add -A && git -C "$r" -c user.name=t -c user.email=t@t commit -qm base &&
            mkdir -p "$r/core" && cp "$S/$f" "$r/core/$f" && git -C "$r" add -A &&
            git -C "$r" -c user.name=t -c user.email=t@t commit -qm change || return 1
        python3 "$root/ci/mutgen.py" --repo "$r" --range HEAD~1..HEAD --per-line 0 \
            --out "$work/$1.out" >"$work/gen.out" 2>"$work/gen.err"
    }
    # check NAME MIN: at least MIN mutants, one patch per index row and one
    # id each, every patch applies, no compiled-out or commented code mutated
    check() {
        local d=$work/$1.out n f row
        n=$(idx "$d" | wc -l)
        [ "$n" -ge "$2" ] || bad "$1: $n mutants, want >= $2: $(cat "$work/gen.err")"
        [ "$(find "$d" -name '*.patch' | wc -l)" = "$n" ] || bad "$1: index rows and patches differ"
        [ -z "$(idx "$d" | cut -f1 | sort | uniq -d)" ] || bad "$1: two mutants with one id"
        for f in "$d"/*.patch; do
            [ -f "$f" ] || continue
            git -C "$work/$1" apply --check "$f" 2>/dev/null || bad "$1: $(basename "$f") does not apply"
        done
        while read -r row; do
            bad "$1: compiled-out, commented or declaration code mutated: $row"
        done < <(idx "$d" | grep -E 'dead[0-9]')
    }
    onefile dup dup.c || bad "dup: exit $?"
    check dup 6
    [ "$(idx "$work/dup.out" | awk -F'\t' '$4 == "swap"' | wc -l)" = 2 ] || bad "dup: not 2 swaps"
    ids=$(idx "$work/dup.out" | cut -f1 | sort)
    # the twin calls keep their ids when the line moves
    sed -i '1i /* moved */' "$work/dup/core/dup.c" &&
        git -C "$work/dup" -c user.name=t -c user.email=t@t commit -qam moved || bad "cannot move"
    python3 "$root/ci/mutgen.py" --repo "$work/dup" --range HEAD~2..HEAD --per-line 0 \
        --out "$work/dup2.out" >/dev/null || bad "dup moved: exit $?"
    [ "$ids" = "$(idx "$work/dup2.out" | cut -f1 | sort)" ] || bad "dup: ids changed when the line moved"
    # a file the change only takes lines from (a hunk adding 0 lines) beside
    # one it adds to: no mutant of the first, the second's as usual
    D=$work/dupdel
    git clone -q "$work/dup" "$D" && sed -i '1d' "$D/core/dup.c" && cp "$S/nonl.c" "$D/core/other.c" &&
        git -C "$D" add -A && git -C "$D" -c user.name=t -c user.email=t@t commit -qm deletions ||
        bad "cannot delete"
    python3 "$root/ci/mutgen.py" --repo "$D" --range HEAD~1..HEAD --per-line 0 \
        --out "$work/dupdel.out" >/dev/null 2>"$work/dupdel.err" || bad "deletions only: exit $?: $(cat "$work/dupdel.err")"
    [ "$(idx "$work/dupdel.out" | cut -f2 | sort -u)" = core/other.c ] ||
        bad "deletions only: mutants of $(idx "$work/dupdel.out" | cut -f2 | sort -u | tr '\n' ' ')"
    # git config and attributes that change git diff's format hide nothing
    for c in diff.noprefix=true diff.mnemonicPrefix=true color.diff=always color.ui=always \
        diff.external=/bin/false diff.srcPrefix=x/ attr; do
        if [ $c = attr ]; then
            echo '*.c binary' >"$work/dup/.gitattributes"
        else
            git -C "$work/dup" config "${c%%=*}" "${c#*=}"
        fi
        rm -rf "$work/dup3.out"
        python3 "$root/ci/mutgen.py" --repo "$work/dup" --range HEAD~2..HEAD --per-line 0 \
            --out "$work/dup3.out" >/dev/null 2>"$work/gen.err" || bad "with $c: exit $?"
        [ "$ids" = "$(idx "$work/dup3.out" | cut -f1 | sort)" ] || bad "with $c: $(cat "$work/gen.err")"
        [ $c = attr ] || git -C "$work/dup" config --unset "${c%%=*}"
    done
    onefile if0 if0.c || bad "if0: exit $?"
    check if0 6
    for live in 'x = a > b;' 'x = x + 1;' 'x = x * 3;'; do
        idx "$work/if0.out" | cut -f5 | grep -qxF "$live" || bad "if0: live '$live' has no mutant"
    done
    onefile cmt cmt.c || bad "cmt: exit $?"
    check cmt 4
    idx "$work/cmt.out" | cut -f5 | grep -qxF 'x = x * a;' || bad "cmt: the code after the comments has no mutant"
    onefile crlf crlf.c || bad "crlf: exit $?"
    check crlf 4
    onefile latin1 latin1.c || bad "latin1: exit $?"
    check latin1 4
    onefile decl decl.c || bad "decl: exit $?"
    check decl 3
    idx "$work/decl.out" | cut -f5 | grep -qxF 'int n = a + 1;' || bad "decl: a plain initializer has no mutant"
    onefile hdr h.h || bad "h.h: exit $?"
    check hdr 0
    onefile nonl nonl.c || bad "nonl: exit $?"
    check nonl 6
    for l in 'int g(int a) { return a - 2; }' 'x = a + b;'; do
        idx "$work/nonl.out" | cut -f5 | grep -qxF "$l" || bad "nonl: '$l' near the end has no mutant"
    done
    onefile space "my dir.c" || bad "my dir.c: exit $?"
    check space 6
    # both branches of an #ifdef open a brace: one block is open after them,
    # so the table is at file scope and g is its own function
    printf 'int f(int v)\n{\n#ifdef ALT\n\tif (v > 1) {\n#else\n\tif (v > 2) {\n#endif\n\t\treturn 1;\n\t}\n\treturn 0;\n}\n\nstatic int tab[] = { 1, 2, 3 };\nint g(int i)\n{\n\treturn tab[i] - 1;\n}\n' >"$S/alt.c"
    onefile alt alt.c || bad "alt.c: exit $?"
    check alt 5
    got=$(idx "$work/alt.out" | awk -F'\t' '$2 == "core/alt.c" && $3 >= 13 { print $3 ":" $7 }' | sort -u | tr '\n' ' ')
    [ "$got" = "13:- 16:g " ] || bad "alt.c: functions after the #ifdef braces: $got (want 13:- 16:g)"
    [ "$(idx "$work/alt.out" | awk -F'\t' '$3 == 6 { print $7; exit }')" = f ] || bad "alt.c: the #else line is not in f"
    ;;
stalebin | noapply | mapkey | envleak)
    # the project of calc_*.c below: `calc` runs t; `pair` runs s2, which it
    # is given, then t, which it finds beside s2 (no target its command
    # names); calc_lonely is called by no test; calc_pair's +100 vs +101 no
    # test can tell; for envleak, `envdump` writes its environment to
    # $XO_ENVDUMP
    P=$work/p
    GP=(git -C "$P" -c user.name=t -c user.email=t@l -c commit.gpgsign=false)
    mkdir -p "$P/core" "$P/suites" "$P/ci" && git init -q "$P"
    cp "$root"/ci/{mutgen.py,mutate.sh,lib.sh,reach.sh,reach.py,reach_rt.c} "$P/ci/"
    printf 'int calc_sum(int a, int b);\nint calc_lonely(int x);\nint calc_pair(int x);\n' >"$P/core/calc.h"
    printf '#include "calc.h"\nint calc_sum(int a, int b)\n{\n\treturn a;\n}\n' >"$P/core/calc.c"
    printf '#include "calc.h"\nint main(void)\n{\n\treturn calc_sum(2, 3) != 5;\n}\n' >"$P/suites/t.c"
    printf '#include <stdio.h>\n#include "calc.h"\nint main(void)\n{\n\tprintf("%%d\\n", calc_pair(1) > 0);\n\treturn 0;\n}\n' >"$P/suites/s2.c"
    printf '#!/bin/sh\n"$1" && "$(dirname "$1")/t"\n' >"$P/suites/pair.sh"
    cat >"$P/CMakeLists.txt" <<'EOF2'
cmake_minimum_required(VERSION 3.18)
project(calc C)
option(XO_WERROR "warnings as errors" OFF)
enable_testing()
add_library(calc STATIC core/calc.c)
target_include_directories(calc PUBLIC core)
foreach(x t s2)
  add_executable(${x} suites/${x}.c)
  target_link_libraries(${x} calc)
endforeach()
add_test(NAME calc COMMAND t)
add_test(NAME pair COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/suites/pair.sh $<TARGET_FILE:s2>)
set_tests_properties(calc pair PROPERTIES LABELS quick TIMEOUT 20)
EOF2
    if [ "$case" = envleak ]; then
        printf '#!/bin/sh\nenv >"$XO_ENVDUMP"\n' >"$P/suites/envdump.sh"
        printf 'add_test(NAME envdump COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/suites/envdump.sh)\nset_tests_properties(envdump PROPERTIES LABELS quick)\n' >>"$P/CMakeLists.txt"
    fi
    printf '/build*/\n' >"$P/.gitignore"
    "${GP[@]}" add -A && "${GP[@]}" commit -qm A
    printf '#include "calc.h"\nint calc_sum(int a, int b)\n{\n\treturn a + b;\n}\n\nint calc_lonely(int x)\n{\n\treturn x * 2;\n}\n\nint calc_pair(int x)\n{\n\treturn x + 100;\n}\n' >"$P/core/calc.c"
    "${GP[@]}" commit -qam B
    python3 "$P/ci/mutgen.py" --repo "$P" --range HEAD~1..HEAD --per-line 0 --out "$work/m" >/dev/null ||
        bad "mutgen exit $?"
    mid() { idx "$work/m" | awk -F'\t' -v f="$1" -v m="$2" '$7 == f && $6 == m { print $1 }'; }
    SUM=$(mid calc_sum 'return a - b;') PAIR=$(mid calc_pair 'return x + 101;')
    LON=$(mid calc_lonely 'return x / 2;')
    [ -n "$SUM" ] && [ -n "$PAIR" ] && [ -n "$LON" ] || bad "mutants not found: '$SUM' '$PAIR' '$LON'"
    prun() { # OUT ARGS...: ci/mutate.sh in the project, scratch and cache shared
        local o=$1
        shift
        (cd "$P" && XO_MUTATE_DIR="$work/s" XO_REACH_CACHE="$work/cache" XO_REQUIRE_OPENCL=0 \
            bash ci/mutate.sh --from "$work/m" -j 2 --out "$work/$o" "$@") >"$work/$o.out" 2>&1
    }
    pres() { awk -F'\t' -v n="$2" '$1 == n { print $7 "|" $8 }' "$work/$1/mutgen.tsv"; }
    case $case in
    stalebin)
        # SUM builds t with its bug; PAIR's test runs t without naming it: t
        # must not hold SUM's bug then (PAIR is undetectable: a survivor)
        prun r1 "$SUM" "$PAIR"
        rc=$?
        cat "$work/r1.out"
        grep -q 'reach map built' "$work/r1.out" || bad "no reach map"
        [ "$(pres r1 "$SUM")" = "caught|quick/calc" ] || bad "SUM: $(pres r1 "$SUM")"
        [[ $(pres r1 "$PAIR") == survived\|* ]] || bad "PAIR called $(pres r1 "$PAIR") by a binary holding SUM"
        [ $rc = 1 ] || bad "exit $rc (want 1: PAIR survives)"
        ;;
    noapply)
        # LON reaches no test, and is listed equivalent in a second set: once
        # its line changed, neither shortcut may hide that it does not apply
        printf '%s\tcore/calc.c:9\tarith\ta reason\n' "$LON" >"$work/eq.tsv"
        python3 "$P/ci/mutgen.py" --repo "$P" --range HEAD~1..HEAD --per-line 0 --out "$work/meq" \
            --equivalents "$work/eq.tsv" >/dev/null || bad "mutgen --equivalents exit $?"
        sed -i 's/return x \* 2;/return (x) * 2;/' "$P/core/calc.c"
        prun r1 "$LON"
        rc=$?
        cat "$work/r1.out"
        grep -q 'reach map built' "$work/r1.out" || bad "no reach map"
        [ $rc = 2 ] && [ "$(pres r1 "$LON")" = "ERROR|(does not apply)" ] ||
            bad "unreached stale mutant: exit $rc, $(pres r1 "$LON") (want 2, ERROR)"
        (cd "$P" && XO_MUTATE_DIR="$work/s" XO_REACH_CACHE="$work/cache" XO_REQUIRE_OPENCL=0 \
            bash ci/mutate.sh --from "$work/meq" -j 2 --out "$work/r2" "$LON") >"$work/r2.out" 2>&1
        rc=$?
        cat "$work/r2.out"
        [ $rc = 2 ] && [ "$(pres r2 "$LON")" = "ERROR|(does not apply)" ] ||
            bad "listed stale mutant: exit $rc, $(pres r2 "$LON") (want 2, ERROR)"
        ;;
    envleak)
        # where this run keeps its scratch tree and maps is its own: a test
        # it runs that runs ci/mutate.sh itself (the ci.mutgen suites do)
        # must not build in its cache or sync into its scratch tree, so
        # neither variable reaches the tests (the map's build runs them too)
        export XO_ENVDUMP=$work/env.txt
        for r in auto off; do
            rm -f "$XO_ENVDUMP"
            prun "r$r" --reach $r "$LON"
            cat "$work/r$r.out"
            grep -q '^XO_ENVDUMP=' "$XO_ENVDUMP" 2>/dev/null || bad "--reach $r: envdump did not run"
            leaked=$(grep -oE '^(XO_REACH_CACHE|XO_MUTATE_DIR)=' "$XO_ENVDUMP" 2>/dev/null | tr '\n' ' ')
            [ -z "$leaked" ] || bad "--reach $r: the tests see $leaked"
        done
        grep -q 'reach map built' "$work/rauto.out" || bad "no reach map"
        ;;
    mapkey)
        prun r1 "$LON"
        grep -q 'reach map built' "$work/r1.out" || bad "no reach map: $(cat "$work/r1.out")"
        key=$(cut -f2 "$work/cache/index.tsv")
        [ "$(head -n 1 "$work/cache/$key/done")" = "$key" ] || bad "done does not name the key"
        # a map whose done names another tree, or whose table lost rows
        # since, is refused with one line and the area runs
        for how in other cut; do
            cp -a "$work/cache/$key" "$work/keep"
            if [ $how = other ]; then sed -i "1s/.*/$(printf '%040d' 0)/" "$work/cache/$key/done"; else
                sed -i '$d' "$work/cache/$key/reach.tsv"; fi
            prun "r$how" --reach use "$SUM"
            rc=$?
            [ $rc = 0 ] && [ "$(grep -c '^mutate: reach map refused' "$work/r$how.out")" = 1 ] &&
                grep -qx 'reach map: none (map refused)' "$work/r$how/mutgen-map.txt" &&
                grep -q "^$SUM .*(area)\$" "$work/r$how.out" ||
                bad "$how map (exit $rc): $(cat "$work/r$how.out")"
            rm -rf "${work:?}/cache/$key" && mv "$work/keep" "$work/cache/$key"
        done
        # a map without its `unmapped` file: races and ISA passes with no row
        # are not taken as mapped
        m=$work/fm
        mkdir -p "$m" && printf 'quick\tt1\t1.0\tok\n' >"$m/tests.tsv"
        printf 'quick\tt1\tcl/host.c\tcl_setup\n' >"$m/reach.tsv"
        printf 'cl/host.c\tcl_setup\nkernels/k.c\tk_scalar\n' >"$m/funcs.tsv" && echo - >"$m/done"
        got=$(printf 'm1\tcl/host.c\tcl_setup\nm2\tkernels/k.c\tk_scalar\n' |
            python3 "$root/ci/reach.py" select --map "$m" | cut -f1,2 | tr '\n\t' ' :')
        [ "$got" = "m1:area m2:area " ] || bad "no unmapped file: $got (want both area)"
        # a record in which no test entered a function (the runtime wrote
        # nothing, or the files went away) is not a map: no done is written
        m=$work/em
        mkdir -p "$m/pcs/quick/t1" && : >"$m/pcs/quick/t1/1.pcs"
        if python3 "$root/ci/reach.py" build --map "$m" --src "$P" --key k >"$work/em.out" 2>&1 ||
            [ -f "$m/done" ] || ! grep -q 'no test recorded a function' "$work/em.out"; then
            bad "an empty record made a map: $(cat "$work/em.out")"
        fi
        ;;
    esac
    ;;
signals)
    # `sig` runs s, which calls calc_sig and is then killed by SIGKILL; `exe`
    # runs e, which calls calc_exec and then replaces itself by sh: what
    # each process entered before is in the map all the same
    P=$work/p
    GP=(git -C "$P" -c user.name=t -c user.email=t@l -c commit.gpgsign=false)
    mkdir -p "$P/core" "$P/suites" "$P/ci" && git init -q "$P"
    cp "$root"/ci/{mutgen.py,mutate.sh,lib.sh,reach.sh,reach.py,reach_rt.c} "$P/ci/"
    printf 'int calc_sig(int x);\nint calc_exec(int x);\n' >"$P/core/calc.h"
    printf '#include "calc.h"\n' >"$P/core/calc.c"
    printf '#include <signal.h>\n#include "calc.h"\nint main(void)\n{\n\tif (calc_sig(3) != 9)\n\t\treturn 0;\n\traise(SIGKILL);\n\treturn 0;\n}\n' >"$P/suites/s.c"
    printf '#include <stdio.h>\n#include <unistd.h>\n#include "calc.h"\nint main(void)\n{\n\tchar b[64];\n\tsnprintf(b, sizeof b, "exit %%d", calc_exec(3) != 9);\n\texecl("/bin/sh", "sh", "-c", b, (char *)0);\n\treturn 1;\n}\n' >"$P/suites/e.c"
    cat >"$P/CMakeLists.txt" <<'EOF2'
cmake_minimum_required(VERSION 3.18)
project(calc C)
option(XO_WERROR "warnings as errors" OFF)
enable_testing()
foreach(x s e)
  add_executable(${x} suites/${x}.c core/calc.c)
  target_include_directories(${x} PRIVATE core)
endforeach()
add_test(NAME sig COMMAND sh -c "$<TARGET_FILE:s>; test $? -eq 137")
add_test(NAME exe COMMAND e)
set_tests_properties(sig exe PROPERTIES LABELS quick TIMEOUT 20)
EOF2
    printf '/build*/\n' >"$P/.gitignore"
    "${GP[@]}" add -A && "${GP[@]}" commit -qm A
    printf '#include "calc.h"\nint calc_sig(int x)\n{\n\treturn x * x;\n}\n\nint calc_exec(int x)\n{\n\treturn x * x;\n}\n' >"$P/core/calc.c"
    "${GP[@]}" commit -qam B
    python3 "$P/ci/mutgen.py" --repo "$P" --range HEAD~1..HEAD --per-line 0 --out "$work/m" >/dev/null ||
        bad "mutgen exit $?"
    SIG=$(idx "$work/m" | awk -F'\t' '$7 == "calc_sig" && $6 == "return x / x;" { print $1 }')
    EXE=$(idx "$work/m" | awk -F'\t' '$7 == "calc_exec" && $6 == "return x / x;" { print $1 }')
    (cd "$P" && XO_MUTATE_DIR="$work/s" XO_REACH_CACHE="$work/cache" XO_REQUIRE_OPENCL=0 \
        bash ci/mutate.sh --from "$work/m" -j 2 --out "$work/r" "$SIG" "$EXE") >"$work/r.out" 2>&1
    rc=$?
    cat "$work/r.out"
    grep -q 'reach map built' "$work/r.out" || bad "no reach map"
    r=$(awk -F'\t' -v a="$SIG" -v b="$EXE" '$1 == a { x = $7 "|" $8 } $1 == b { y = $7 "|" $8 } END { print x " " y }' "$work/r/mutgen.tsv")
    [ $rc = 0 ] && [ "$r" = "caught|quick/sig caught|quick/exe" ] ||
        bad "killed and exec'd processes: exit $rc, $r (want both caught by reach)"
    [ "$(grep -c "(reach: 1 test(s))" "$work/r.out")" = 2 ] || bad "not both placed by reach"
    ;;
moved)
    # a mutant made when its line was in fa, run after that code moved to
    # fb (which the test calls; fa is called by none): the run places it by
    # the function it is in now, and the test catches it
    P=$work/q
    GP=(git -C "$P" -c user.name=t -c user.email=t@l -c commit.gpgsign=false)
    mkdir -p "$P/core" "$P/suites" "$P/ci" && git init -q "$P"
    cp "$root"/ci/{mutgen.py,mutate.sh,lib.sh,reach.sh,reach.py,reach_rt.c} "$P/ci/"
    printf 'int fa(int x);\nint fb(int x);\n' >"$P/core/c.h" && printf '#include "c.h"\n' >"$P/core/c.c"
    printf '#include "c.h"\nint main(void)\n{\n\treturn fa(2) != 9;\n}\n' >"$P/suites/t.c"
    printf 'cmake_minimum_required(VERSION 3.18)\nproject(q C)\noption(XO_WERROR "" OFF)\nenable_testing()\nadd_executable(t suites/t.c core/c.c)\ntarget_include_directories(t PRIVATE core)\nadd_test(NAME calc COMMAND t)\nset_tests_properties(calc PROPERTIES LABELS quick TIMEOUT 20)\n' >"$P/CMakeLists.txt"
    printf '/build*/\n' >"$P/.gitignore"
    "${GP[@]}" add -A && "${GP[@]}" commit -qm A
    body=$'{\n\tint a = x + 1;\n\tint b = a + 1;\n\tint c = b + 1;\n\tint y = c * 3;\n\tint d = y + 1;\n\tint e = d + 1;\n\tint f = e + 1;\n\treturn f - 9;\n}\n'
    printf 'int fa(int x)\n%s' "$body" >>"$P/core/c.c" && "${GP[@]}" commit -qam B
    python3 "$P/ci/mutgen.py" --repo "$P" --range HEAD~1..HEAD --per-line 0 --out "$work/m" >/dev/null ||
        bad "mutgen exit $?"
    printf '#include "c.h"\nint fa(int x)\n{\n\treturn x;\n}\n\nint fb(int x)\n%s' "$body" >"$P/core/c.c"
    sed -i 's/fa(2)/fb(2)/' "$P/suites/t.c" && "${GP[@]}" commit -qam C
    id=$(idx "$work/m" | awk -F'\t' '$4 == "arith" && $5 ~ /c \* 3/ { print $1 }')
    git -C "$P" apply --check "$work/m/$id.patch" && grep -qx '# function: fa' "$work/m/$id.patch" ||
        bad "the moved mutant '$id' does not apply or names no fa"
    [ "$(cd "$P" && python3 ci/mutgen.py function --repo . "$work/m/$id.patch")" = "$id"$'\tfb' ] ||
        bad "mutgen.py function: $(cd "$P" && python3 ci/mutgen.py function --repo . "$work/m/$id.patch" 2>&1)"
    (cd "$P" && XO_MUTATE_DIR="$work/s" XO_REACH_CACHE="$work/cache" XO_REQUIRE_OPENCL=0 \
        bash ci/mutate.sh --from "$work/m" -j 2 --out "$work/r" "$id") >"$work/r.out" 2>&1
    rc=$?
    cat "$work/r.out"
    grep -q "^mutate: $id: its line is in fb now, not in fa" "$work/r.out" || bad "no word of the move"
    [ $rc = 0 ] && [ "$(awk -F'\t' -v n="$id" '$1 == n { print $7 "|" $8 }' "$work/r/mutgen.tsv")" = "caught|quick/calc" ] ||
        bad "moved mutant: exit $rc: $(cat "$work/r/mutgen.tsv")"
    grep -q "^$id .*(reach: 1 test(s))" "$work/r.out" || bad "not placed by reach"
    ;;
context)
    # a change that git aligns differently with -U0 than with its default
    # three lines of context (blank lines around a moved block: 9 lines
    # added with -U0, 13 with -U3; suites/mutgen_context/): the generator
    # reads the -U0 diff's hunks and checks them against git's count of
    # that same diff, so the day's change is read, not refused
    cp "$root/suites/mutgen_context/before.c" "$repo/core/ctx.c" && "${G[@]}" add -A &&
        "${G[@]}" commit -qm before
    cp "$root/suites/mutgen_context/after.c" "$repo/core/ctx.c" && "${G[@]}" commit -qam after
    gen "$work/m" --range HEAD~1..HEAD --per-line 0 || bad "mutgen exit $?: $(cat "$work/gen.err")"
    grep -q "^mutgen: .* of [0-9a-f]*\.\.[0-9a-f]* " "$work/gen.out" ||
        bad "no count line: $(cat "$work/gen.out" "$work/gen.err")"
    ;;
badargs)
    "${G[@]}" tag v1.0 HEAD~1 && "${G[@]}" update-ref refs/remotes/origin/main HEAD~1
    for r in v1.0..HEAD origin/main..HEAD; do
        gen "$work/ok" --range "$r" || bad "--range $r: exit $?: $(cat "$work/gen.err")"
        [ "$(idx "$work/ok" | wc -l)" -ge 9 ] || bad "--range $r: too few mutants"
    done
    # one ARGS...: one line on stderr holding WANT, exit 2
    one() {
        local want=$1 rc
        shift
        gen "$work/bad" "$@"
        rc=$?
        [ $rc = 2 ] && [ "$(wc -l <"$work/gen.err")" = 1 ] && grep -qF -- "$want" "$work/gen.err" ||
            bad "$*: exit $rc, want 2 and one line with '$want': $(cat "$work/gen.err")"
    }
    printf 'g0123456789\tcore/calc.c:1\trel\tcaf\351\n' >"$work/latin1.tsv"
    one 'no-such.tsv' --range HEAD~1..HEAD --equivalents "$work/no-such.tsv"
    one "$work" --range HEAD~1..HEAD --equivalents "$work"
    one 'UTF-8' --range HEAD~1..HEAD --equivalents "$work/latin1.tsv"
    one "'nosuch' is an unknown commit" --range HEAD..nosuch
    one 'A..B' --range HEAD~1...HEAD
    one 'unrecognized' --range HEAD~1..HEAD --bogus
    one 'expected one argument' --range
    # an --out folder that holds other files is refused and left whole
    mkdir -p "$work/mine" && echo keep >"$work/mine/README" && printf '# mutant: m1\n' >"$work/mine/m1.patch"
    one 'which ci/mutgen.py did not write' --range HEAD~1..HEAD --out "$work/mine"
    [ -f "$work/mine/README" ] && [ -f "$work/mine/m1.patch" ] || bad "--out deleted files it did not write"
    rm "$work/mine/README"
    one 'm1.patch' --range HEAD~1..HEAD --out "$work/mine"
    [ -f "$work/mine/m1.patch" ] || bad "--out deleted a patch it did not write"
    # its own output is replaced; a sub-folder (a runner's results) is kept
    gen "$work/ok" --range HEAD~1..HEAD --per-line 0 && mkdir -p "$work/ok/result" &&
        echo r >"$work/ok/result/mutgen.txt" && gen "$work/ok" --range HEAD~1..HEAD ||
        bad "--out over its own output: $(cat "$work/gen.err")"
    [ -f "$work/ok/result/mutgen.txt" ] || bad "--out removed a sub-folder's file"
    [ "$(find "$work/ok" -name '*.patch' | wc -l)" = "$(idx "$work/ok" | wc -l)" ] || bad "old patches left in --out"
    ;;
*)
    echo "FAIL unknown case $case"
    exit 1
    ;;
esac
[ $fail = 0 ] && echo "PASS $case"
exit $fail
