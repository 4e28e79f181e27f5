#!/usr/bin/env bash
# suites/coverage_agg.sh XO SRCROOT: ci/coverage.sh's collection on a real
# --coverage build (docs/coverage.md). A tiny C program laid out like the
# tree (model/, kernels/ with a driver and a per-ISA file, cli/, suites/)
# is built with gcc --coverage -O0 in a temp dir, committed to a real git
# repository, and run once; its covered and uncovered lines and branch
# outcomes are known, so the per-folder table must come out exact:
#
#   model/m.c      m_pick: 4 lines (decl, if, return 1, return 0), argc = 1
#                  takes the if's false outcome only; m_never: 3 lines never
#                  run -> 7 lines, 3 hit, 2 branches, 1 hit, to-do 4
#   kernels/k.c    k_run(3): 5 lines, all hit; the loop's 2 outcomes taken
#   kernels/k__avx2.c  2 lines never run, not on the to-do list (a SIMD body)
#   cli/main.c     4 lines, 3 hit (not the argc > 5 call), 2 branches, 1 hit
#   suites/t.c     not counted (a test, not code under test)
#
# Then the figures go into a real crossover store (xo perf record made it)
# and `xo perf report` shows the section with both plots. Refused up front
# (before any build; exit 2, one line, no tables, the file left as it was):
# a file that is not a crossover store, a store this user cannot write, one
# whose table coverage has other columns, one another process holds locked
# (said as such), and an --out that is an existing file or cannot be made
# (a path under a file). A table that cannot be written at the end is one
# line and exit 2 too (exit 1 means a test failed), never a traceback.
set -u -o pipefail
XO=$1 ROOT=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/xo-coverage.XXXXXX") || exit 1
trap 'kill "$holder" 2>/dev/null; rm -rf "$T"' EXIT
holder=''
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
S=$T/src B=$T/build
mkdir -p "$S/model" "$S/kernels" "$S/cli" "$S/suites" "$B"

cat >"$S/model/m.c" <<'EOF'
/* m.c: one function half covered, one never called */
int m_pick(int x);
int m_never(int x);

int m_pick(int x)
{
	if (x > 2)
		return 1;
	return 0;
}

int m_never(int x)
{
	int y = x * 2;

	return y + 1;
}
EOF
cat >"$S/kernels/k.c" <<'EOF'
int k_run(int n);

int k_run(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += i;
	return s;
}
EOF
cat >"$S/kernels/k__avx2.c" <<'EOF'
int k_body(int n);

int k_body(int n)
{
	return n + 1;
}
EOF
cat >"$S/suites/t.c" <<'EOF'
int t_never(void);

int t_never(void)
{
	return 7;
}
EOF
cat >"$S/cli/main.c" <<'EOF'
int m_pick(int x);
int k_run(int n);
int k_body(int n);

int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 5)
		return k_body(argc);
	return m_pick(argc) + k_run(3) - 3;
}
EOF
for f in model/m kernels/k kernels/k__avx2 suites/t cli/main; do
    (cd "$B" && gcc --coverage -O0 -c "$S/$f.c" -o "$(basename "$f").o") || fail "gcc $f.c"
done
(cd "$B" && gcc --coverage -o prog ./*.o && ./prog) || fail "the tiny program did not build or run"
git -C "$S" init -q && git -C "$S" add -A &&
    git -C "$S" -c user.name=t -c user.email=t@localhost commit -qm tiny || fail "git"
sha=$(git -C "$S" rev-parse --short=12 HEAD)

# a real crossover store, then one that is not
"$XO" perf record --db "$T/s.sqlite" --filter '^op/relu/fwd/.*/ref$' --no-progress >/dev/null ||
    fail "xo perf record"
sqlite3 "$T/other.sqlite" 'CREATE TABLE t(x); INSERT INTO t VALUES(1)' || fail sqlite3
printf 'not a database, just text\n' >"$T/text.sqlite"
cp "$T/other.sqlite" "$T/other.orig"
# a crossover store with a table coverage that is not this one
cp "$T/s.sqlite" "$T/shaped.sqlite" && sqlite3 "$T/shaped.sqlite" 'CREATE TABLE coverage(x)' ||
    fail sqlite3
# a store this user cannot write: mode 444; root writes any file, so the
# check runs as nobody there (setpriv), which may read the tree but not it
cp "$T/s.sqlite" "$T/ro.sqlite" && chmod 444 "$T/ro.sqlite" && chmod 755 "$T" || fail chmod
as_reader() {
    if [ "$(id -u)" = 0 ]; then
        setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
    else
        "$@"
    fi
}
# a store another process holds an exclusive lock on while the check runs
cp "$T/s.sqlite" "$T/locked.sqlite" || fail cp
python3 -c 'import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
time.sleep(50)' "$T/locked.sqlite" >"$T/holder.out" &
holder=$!
for _ in $(seq 100); do grep -q held "$T/holder.out" && break; sleep 0.1; done
grep -q held "$T/holder.out" || fail "the lock holder did not start"
for bad in other.sqlite text.sqlite missing.sqlite shaped.sqlite ro.sqlite locked.sqlite; do
    runner=()
    [ $bad = ro.sqlite ] && runner=(as_reader)
    XO_COVERAGE_DB_WAIT=0.2 "${runner[@]}" bash "$ROOT/ci/coverage.sh" --collect-only \
        --build "$B" --src "$S" --out "$T/out-bad" --db "$T/$bad" >"$T/bad.out" 2>"$T/bad.err"
    rc=$?
    cat "$T/bad.err"
    [ $rc -eq 2 ] || fail "--db $bad: exit $rc, not 2"
    [ "$(wc -l <"$T/bad.err")" -eq 1 ] || fail "--db $bad: not one line on stderr"
    [ ! -e "$T/out-bad" ] || fail "--db $bad: tables written although the store was refused"
    case $bad in
    other.*) why='not a crossover perf store' ;;
    text.*) why='not a readable SQLite database' ;;
    shaped.*) why='its table coverage has other columns (x)' ;;
    ro.*) why='the store cannot be written (attempt to write a readonly database)' ;;
    locked.*) why='the store is locked by another process' ;;
    *) why='no such perf store' ;;
    esac
    grep -qF "$why" "$T/bad.err" || fail "--db $bad: the reason is not '$why'"
done
kill "$holder" && wait "$holder" 2>/dev/null
holder=''
cmp -s "$T/other.sqlite" "$T/other.orig" || fail "a foreign database was changed"
[ ! -e "$T/missing.sqlite" ] || fail "a missing store was created"
[ "$(sqlite3 "$T/shaped.sqlite" 'SELECT count(*) FROM coverage')" = 0 ] ||
    fail "the foreign table coverage was written"

# --out an existing file: refused, the file left as it was
printf 'keep me\n' >"$T/outfile"
bash "$ROOT/ci/coverage.sh" --collect-only --build "$B" --src "$S" --out "$T/outfile" \
    >"$T/bad.out" 2>"$T/bad.err"
rc=$?
cat "$T/bad.err"
[ $rc -eq 2 ] && [ "$(wc -l <"$T/bad.err")" -eq 1 ] &&
    grep -q 'outfile: exists and is not a directory' "$T/bad.err" ||
    fail "--out an existing file: exit $rc, $(cat "$T/bad.err")"
[ "$(cat "$T/outfile")" = 'keep me' ] || fail "--out an existing file: it was changed"
# --out under a file: it cannot be made
bash "$ROOT/ci/coverage.sh" --collect-only --build "$B" --src "$S" --out "$T/outfile/sub" \
    >"$T/bad.out" 2>"$T/bad.err"
rc=$?
cat "$T/bad.err"
[ $rc -eq 2 ] && [ "$(wc -l <"$T/bad.err")" -eq 1 ] &&
    grep -q 'outfile/sub: cannot create the directory' "$T/bad.err" ||
    fail "--out under a file: exit $rc, $(cat "$T/bad.err")"
# a table that cannot be written at the end (a directory in its place)
mkdir -p "$T/out-late/coverage.tsv"
bash "$ROOT/ci/coverage.sh" --collect-only --build "$B" --src "$S" --out "$T/out-late" \
    >"$T/bad.out" 2>"$T/bad.err"
rc=$?
cat "$T/bad.err"
[ $rc -eq 2 ] && [ "$(wc -l <"$T/bad.err")" -eq 1 ] &&
    grep -q 'cannot write the tables' "$T/bad.err" ||
    fail "--out with an unwritable table: exit $rc, $(cat "$T/bad.err")"

bash "$ROOT/ci/coverage.sh" --collect-only --build "$B" --src "$S" --out "$T/out" \
    --db "$T/s.sqlite" || fail "ci/coverage.sh --collect-only"
expect=$(printf '%s\n' 'folder	lines	lines_hit	branches	branches_hit' \
    'core	0	0	0	0' 'kernels	7	5	2	2' 'reference	0	0	0	0' 'cl	0	0	0	0' \
    'model	7	3	2	1' 'perfdb	0	0	0	0' 'cli	4	3	2	1' 'include	0	0	0	0' \
    'all	18	11	6	4')
[ "$(cat "$T/out/coverage.tsv")" = "$expect" ] ||
    fail "coverage.tsv: $(cat "$T/out/coverage.tsv")"
grep -q '^model/m.c	model	7	3	2	1	4$' "$T/out/coverage-files.tsv" || fail "per-file model/m.c"
grep -q '^kernels/k__avx2.c	kernels	2	0	0	0	-$' "$T/out/coverage-files.tsv" ||
    fail "per-file kernels/k__avx2.c"
! grep -q suites "$T/out/coverage-files.tsv" || fail "a suite's file was counted"
grep -qx '  m_pick: 8' "$T/out/todo.txt" && grep -qx '  m_never: 12-16' "$T/out/todo.txt" ||
    fail "todo.txt: $(cat "$T/out/todo.txt")"
! grep -q 'k__avx2\|kernels/k.c\|cli/' "$T/out/todo.txt" || fail "todo.txt lists a file out of scope"

# code on the blind list: off the to-do count and listed apart with the
# reason; a function the file does not have is reported as a stale entry
printf '# test\nmodel/m.c m_never,m_gone runs where gcov cannot count\n' >"$T/blind.txt"
bash "$ROOT/ci/coverage.sh" --collect-only --build "$B" --src "$S" --out "$T/out2" \
    --blind "$T/blind.txt" >/dev/null 2>"$T/blind.err" || fail "--blind"
grep -q '^model/m.c	model	7	3	2	1	1$' "$T/out2/coverage-files.tsv" ||
    fail "--blind: the to-do count of model/m.c is not 1"
grep -A1 '^model/m.c, not measured: runs where gcov cannot count$' "$T/out2/todo.txt" |
    grep -qx '  m_never: 12-16' || fail "--blind: todo.txt: $(cat "$T/out2/todo.txt")"
grep -q 'm_gone in model/m.c.*stale' "$T/blind.err" || fail "--blind: no stale-entry warning"

rows=$(sqlite3 "$T/s.sqlite" "SELECT folder, lines, lines_hit, branches, branches_hit,
  coalesce(todo, '-') FROM coverage WHERE sha = '$sha' ORDER BY folder" | tr '\n' ' ')
[ "$rows" = "cli|4|3|2|1|- kernels|7|5|2|2|0 model|7|3|2|1|4 " ] || fail "stored rows: $rows"
"$XO" perf report --db "$T/s.sqlite" --out "$T/rep" >/dev/null || fail "xo perf report"
grep -q 'Coverage of the quick suites' "$T/rep/index.html" &&
    grep -q '<tr><td>model</td><td>3/7</td><td>42.9%</td><td>1/2</td><td>50.0%</td><td>4</td></tr>' \
        "$T/rep/index.html" &&
    grep -q "<code>$sha</code>" "$T/rep/index.html" || fail "report: no coverage section"
# each line of the coverage plots draws its own folder's data
grep -o "'data/coverage_[^']*\.dat' using [^']* title '[^']*'" "$T/rep/plots.gp" >"$T/lines.txt"
[ "$(wc -l <"$T/lines.txt")" = 6 ] || fail "report: plots.gp has not 3 folders x 2 plots: $(cat "$T/lines.txt")"
while IFS= read -r l; do
    d=${l#\'data/coverage_} d=${d%%.dat\'*} t=${l##* title \'} t=${t%\'}
    [ "$d" = "$t" ] && [ -s "$T/rep/data/coverage_$d.dat" ] || fail "report: plot line: $l"
done <"$T/lines.txt"
# the page stays well formed around the section: every table and row it
# opens is closed
for t in table tr; do
    o=$(grep -o "<$t[ >]" "$T/rep/index.html" | wc -l) c=$(grep -o "</$t>" "$T/rep/index.html" | wc -l)
    [ "$o" = "$c" ] || fail "report: $o <$t> opened, $c closed"
done
for f in coverage_lines.png coverage_lines.svg coverage_branches.png coverage_branches.svg; do
    [ -s "$T/rep/$f" ] || fail "report: no $f"
done
echo "coverage: aggregation, store and report as expected"
