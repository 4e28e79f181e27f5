#!/bin/sh
# perfdb_pg_cli.sh XO - `xo perf` on a PostgreSQL store (run under
# suites/pg_cluster.sh, which sets XO_TEST_PG): record, compare, detect and
# report on the server; a testbed's SQLite store merged with import-db twice
# (the second adds nothing); a connection that fails is one line, exit 2,
# without the password.
set -u
XO=$1
U=$XO_TEST_PG
work=$(mktemp -d "${TMPDIR:-/tmp}/xo-pgcli-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
die() { echo "perfdb_pg_cli: FAIL: $*" >&2; exit 1; }
count() { psql -X -A -t -q "$U" -c "$1"; }

# a store on the server, as on a file
for i in 1 2; do
    "$XO" perf record --db "$U" --filter '^op/relu/fwd/.*/ref$' --no-progress >/dev/null ||
        die "record $i into $U"
done
"$XO" perf compare --db "$U" run:1 run:2 >cmp.txt
[ $? -le 1 ] && grep -q 'op/relu/fwd/n512_l27_c16/ref' cmp.txt || die "compare: $(cat cmp.txt)"
"$XO" perf detect --db "$U" >det.txt
[ $? -le 1 ] || die "detect"
if command -v gnuplot >/dev/null; then
    "$XO" perf report --db "$U" --out rep >/dev/null && test -s rep/index.html || die "report"
fi

# a testbed's local store merged into the shared one, twice
for i in 1 2; do
    "$XO" perf record --db local.sqlite --filter '^op/relu/fwd/.*/ref$' --no-progress >/dev/null ||
        die "record $i into local.sqlite"
done
# the local series relabelled as an instruction-count series (schema 5's
# metric and unit columns): import-db must carry them over. The samples
# become counts (seconds x 1e9, whole): import-db checks each value against
# its series' metric, and a count below one instruction is refused.
sqlite3 local.sqlite "UPDATE benchmarks SET name = replace(name, '/ref', '/instructions/ref'),
    metric = 'instructions', unit = 'instructions';
    UPDATE samples SET wall_s = max(1, round(wall_s * 1e9))" || die "relabel local.sqlite"
"$XO" perf import-db --db "$U" local.sqlite >imp1.txt || die "import-db: $(cat imp1.txt)"
[ "$(count "SELECT count(*) FROM benchmarks WHERE metric = 'instructions' AND unit = 'instructions'")" = \
  "$(sqlite3 local.sqlite 'SELECT count(*) FROM benchmarks')" ] ||
    die "import-db dropped the benchmarks' metric/unit"
grep -q '2 runs added, 0 already' imp1.txt || die "first import: $(cat imp1.txt)"
n1="$(count 'SELECT count(*) FROM runs') $(count 'SELECT count(*) FROM results')"
n1="$n1 $(count 'SELECT count(*) FROM samples') $(count 'SELECT count(*) FROM commits')"
"$XO" perf import-db --db "$U" local.sqlite >imp2.txt || die "import-db again"
grep -q '0 runs added, 2 already' imp2.txt || die "second import: $(cat imp2.txt)"
n2="$(count 'SELECT count(*) FROM runs') $(count 'SELECT count(*) FROM results')"
n2="$n2 $(count 'SELECT count(*) FROM samples') $(count 'SELECT count(*) FROM commits')"
[ "$n1" = "$n2" ] || die "counts moved on the second import: $n1 -> $n2"
[ "$(echo "$n1" | cut -d' ' -f1)" = 4 ] || die "expected 4 runs, got: $n1"
# the imported samples are the local ones, value for value: both sums add the
# same doubles, perhaps in another order, so they differ by a few ulp at most
# (20 terms: <= 20 * 2^-53 relative); 1e-12 is far above that, far below a
# changed sample
a=$(sqlite3 local.sqlite 'SELECT printf("%.17g", sum(wall_s)) FROM samples')
b=$(count "SELECT sum(s.wall_s)::text FROM samples s JOIN results r ON r.id = s.result_id WHERE r.run_id > 2")
python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if abs(a - b) <= 1e-12 * abs(a) else 1)" "$a" "$b" ||
    die "imported samples differ: $a vs $b"

# a server that is not there: one line, exit 2, the password kept out
"$XO" perf compare --db "postgresql://xo:s3cretpw@/xo?host=$work/nowhere" run:1 2>err.txt
rc=$?
cat err.txt
[ $rc -eq 2 ] || die "exit $rc for an unreachable server"
[ "$(wc -l <err.txt)" -eq 1 ] || die "not one line"
grep -q 's3cretpw' err.txt && die "password printed"
grep -q 'xo:\*\*\*@' err.txt || die "the URI is not named (redacted)"
echo "perfdb_pg_cli: ok ($n1: runs results samples commits)"
