#!/bin/sh
# perf_scale.sh XO PERF_GEN DB - the store's scale targets: a
# history of 10 000 runs (perf_gen: 5 benchmarks x 10 samples, 2 testbeds)
# in DB, then the median wall time of 5 `xo perf compare` (target < 1 s) and
# 3 `xo perf report` (target < 60 s). DB is a SQLite path (removed first) or
# a PostgreSQL URI (run under suites/pg_cluster.sh with "$XO_TEST_PG").
# Prints one line with the medians; exit 1 when a target is missed.
# XO_SCALE_RUNS overrides the 10 000. XO_SCALE_DETECT=1 also times 3 `xo perf
# detect` (no target here; detect's own scale check, 100 000 runs with a
# target, is suites/perf_detect_scale.sh).
set -u
XO=$1 GEN=$2 DB=$3
RUNS=${XO_SCALE_RUNS:-10000}
work=$(mktemp -d "${TMPDIR:-/tmp}/xo-scale-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
case $DB in
postgres://* | postgresql://*) engine=PostgreSQL ;;
*) engine=SQLite; rm -f "$DB" "$DB-wal" "$DB-shm" ;;
esac

now() { date +%s.%N; }
elapsed() { awk -v a="$(now)" -v b="$1" 'BEGIN { print a - b }'; }
# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

t0=$(now)
"$GEN" "$DB" "$RUNS" >/dev/null || exit 1
gen=$(elapsed "$t0")
: >"$work/cmp"
for i in 1 2 3 4 5; do
    t0=$(now)
    "$XO" perf compare --db "$DB" "run:$((RUNS - 2))" "run:$RUNS" >/dev/null
    rc=$?
    [ $rc -le 1 ] || { echo "perf_scale: compare failed (exit $rc)"; exit 1; }
    elapsed "$t0" >>"$work/cmp"
done
: >"$work/rep"
for i in 1 2 3; do
    rm -rf "$work/report"
    t0=$(now)
    "$XO" perf report --db "$DB" --out "$work/report" >/dev/null || { echo "perf_scale: report failed"; exit 1; }
    elapsed "$t0" >>"$work/rep"
done
det=""
if [ "${XO_SCALE_DETECT:-0}" = 1 ]; then
    : >"$work/det"
    for i in 1 2 3; do
        t0=$(now)
        "$XO" perf detect --db "$DB" >/dev/null
        rc=$?
        [ $rc -le 1 ] || { echo "perf_scale: detect failed (exit $rc)"; exit 1; }
        elapsed "$t0" >>"$work/det"
    done
    det=$(printf ', detect median %.1f s' "$(median <"$work/det")")
fi
cmp=$(median <"$work/cmp") rep=$(median <"$work/rep")
printf 'perf_scale: %s, %s runs (generated in %.0f s): compare median %.2f s (target < 1), report median %.1f s (target < 60)%s, load %s\n' \
    "$engine" "$RUNS" "$gen" "$cmp" "$rep" "$det" "$(cut -d' ' -f1-3 /proc/loadavg)"
awk -v c="$cmp" -v r="$rep" 'BEGIN { exit !(c < 1 && r < 60) }'
