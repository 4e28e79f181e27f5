#!/usr/bin/env bash
# suites/perfdb_counts.sh XO - `xo perf record --metric instructions` for real:
# two records of one build count every benchmark's call
# under valgrind's callgrind; each instruction series must be within 0.5% of
# itself across the two records (the property compare's count rule relies
# on), stored with its metric, unit, ISA and thread count, and compare
# --metric instructions must call every series SAME. Exit 77 (skipped) when
# valgrind is not installed; ctest runs it in a fresh directory.
set -u
XO=$1
fails=0
check() {
    if ! eval "$1"; then
        echo "FAILED: $1"
        fails=$((fails + 1))
    fi
}
rm -f c.sqlite* nv.sqlite*
# without valgrind: one line, exit 2, no run row (the store is not even made)
env PATH=/nonexistent "$XO" perf record --db nv.sqlite --metric instructions --device cpu \
    --filter '^op/relu/fwd' --no-progress >out.txt 2>err.txt
rc=$?
cat err.txt
check "[ $rc -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ] && grep -q 'needs valgrind' err.txt"
check "[ ! -f nv.sqlite ] || [ \"\$(sqlite3 nv.sqlite 'SELECT count(*) FROM runs')\" -eq 0 ]"
# nothing to count on cl alone: refused before a run row exists
"$XO" perf record --db nv.sqlite --metric instructions --device cl --no-progress \
    >out.txt 2>err.txt
rc=$?
cat err.txt
check "[ $rc -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ] && grep -q 'counts ref and cpu only' err.txt"
check "[ ! -f nv.sqlite ] || [ \"\$(sqlite3 nv.sqlite 'SELECT count(*) FROM runs')\" -eq 0 ]"
if ! command -v valgrind >/dev/null; then
    echo "skipped: valgrind is not installed (Debian package valgrind)"
    [ $fails -eq 0 ] && exit 77 || exit 1
fi
# an op, a dense layer (BLAS-free cpu kernel, libm's exp) and a model forward
# pass, on cpu and ref
filter='^(op/relu/fwd|op/dense/fwd/n512_c64_u32_sigmoid|model/seed/predict/b8)/'
start=$(date +%s)
"$XO" perf record --db c.sqlite --metric time,instructions --device cpu --device ref --quick \
    --filter "$filter" --no-progress --no-probe || exit 1
"$XO" perf record --db c.sqlite --metric instructions --device cpu --device ref --quick \
    --filter "$filter" --no-progress --no-probe || exit 1
echo "two records: $(($(date +%s) - start)) s"
q() { sqlite3 c.sqlite "$1"; }
check "[ \"\$(q \"SELECT count(*) FROM benchmarks WHERE metric = 'instructions'\")\" -eq 6 ]"
check "[ \"\$(q \"SELECT count(*) FROM benchmarks WHERE metric = 'time'\")\" -eq 6 ]"
check "[ \"\$(q \"SELECT count(*) FROM benchmarks WHERE metric = 'instructions' AND
    (unit != 'instructions' OR name NOT LIKE '%/instructions/%' OR params NOT LIKE
    '%counter=callgrind-Ir isa=% threads=1%')\")\" -eq 0 ]"
check "[ \"\$(q \"SELECT count(*) FROM benchmarks WHERE device = 'cpu' AND metric =
    'instructions' AND params NOT LIKE '%isa=avx2%' AND params NOT LIKE '%isa=scalar%'\")\" -eq 0 ]"
# run 2 has counts only; 3 samples a series, each a positive whole count
check "[ \"\$(q \"SELECT count(*) FROM results WHERE run_id = 2\")\" -eq 6 ]"
check "[ \"\$(q \"SELECT count(*) FROM samples s JOIN results r ON r.id = s.result_id JOIN
    benchmarks b ON b.id = r.benchmark_id WHERE b.metric = 'instructions' AND
    (s.wall_s < 1000 OR s.wall_s != round(s.wall_s))\")\" -eq 0 ]"
# the spread of every series over both records (6 samples)
q "SELECT b.name, min(r.min), max(r.max), max(r.max) / min(r.min) - 1 FROM results r
   JOIN benchmarks b ON b.id = r.benchmark_id WHERE b.metric = 'instructions' GROUP BY b.id"
check "[ \"\$(q \"SELECT count(*) FROM (SELECT max(r.max) / min(r.min) - 1 AS d FROM results r
    JOIN benchmarks b ON b.id = r.benchmark_id WHERE b.metric = 'instructions'
    GROUP BY b.id) WHERE d > 0.005\")\" -eq 0 ]"
"$XO" perf compare --db c.sqlite --metric instructions run:1 run:2 >cmp.txt
rc=$?
cat cmp.txt
check "[ $rc -eq 0 ] && grep -q '^0 slower, 0 faster, 3 same, 0 unknown' cmp.txt"
check "grep -q '^ref: 0 slower, 0 faster, 3 same' cmp.txt"
# the time compare does not see the instruction series
"$XO" perf compare --db c.sqlite run:1 run:1 >tcmp.txt
check "! grep -q '/instructions/' tcmp.txt"
# run 2 holds counts only: compare for time says so, one line, exit 2 (it
# said "0 slower, 0 faster" and exited 0)
"$XO" perf compare --db c.sqlite run:1 run:2 >out.txt 2>err.txt
rc=$?
cat err.txt
check "[ $rc -eq 2 ] && [ \$(wc -l <err.txt) -eq 1 ] && grep -q 'no time series' err.txt"
# the store as the nightly records it answers as its time series alone:
# advise on it and on a copy without the instruction series agree
cp c.sqlite t.sqlite
sqlite3 t.sqlite "DELETE FROM samples WHERE result_id IN (SELECT r.id FROM results r JOIN
    benchmarks b ON b.id = r.benchmark_id WHERE b.metric = 'instructions');
    DELETE FROM results WHERE benchmark_id IN (SELECT id FROM benchmarks WHERE
    metric = 'instructions'); DELETE FROM benchmarks WHERE metric = 'instructions'"
"$XO" perf advise --db c.sqlite --model seed >adv_mixed.txt 2>&1
"$XO" perf advise --db t.sqlite --model seed >adv_time.txt 2>&1
cat adv_mixed.txt
check "diff adv_time.txt adv_mixed.txt"
[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
