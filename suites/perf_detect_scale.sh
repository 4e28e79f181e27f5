#!/bin/sh
# perf_detect_scale.sh XO PERF_GEN DB - `xo perf detect` at fleet size: a
# history of 100 000 runs (perf_gen --bulk: 5 benchmarks x 10 samples, 2
# testbeds, one straight line of commits, a 10% step at the middle commit of
# benchmark 0), i.e. 10 series of 50 000 points, 5 000 000 samples. Times a
# full detect (no earlier detect: every series read and fitted; target
# < 30 s), then one new run arriving (perf_gen --append) and the detect after
# it (only the 5 series of that run's testbed are fitted again). Checks that
# the planted step is found on both testbeds, confirmed, at the middle commit.
# DB is a SQLite path (removed first) or a PostgreSQL URI (run under
# suites/pg_cluster.sh with "$XO_TEST_PG"). Prints one line; exit 1 when the
# target is missed or the step is not found.
# XO_SCALE_RUNS overrides the 100 000.
set -u
XO=$1 GEN=$2 DB=$3
RUNS=${XO_SCALE_RUNS:-100000}
work=$(mktemp -d "${TMPDIR:-/tmp}/xo-detect-scale-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
case $DB in
postgres://* | postgresql://*) engine=PostgreSQL ;;
*) engine=SQLite; rm -f "$DB" "$DB-wal" "$DB-shm" ;;
esac

now() { date +%s.%N; }
elapsed() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }

t0=$(now)
"$GEN" --bulk "$DB" "$RUNS" >/dev/null || { echo "perf_detect_scale: perf_gen failed"; exit 1; }
gen=$(elapsed "$t0")
t0=$(now)
"$XO" perf detect --db "$DB" --json >"$work/full.txt"
rc=$?
full=$(elapsed "$t0")
[ $rc -le 1 ] || { echo "perf_detect_scale: detect failed (exit $rc)"; cat "$work/full.txt"; exit 1; }
# the first slow commit of each testbed (they alternate): RUNS/2 and the next
a=$(printf '%040x' $((0x9e000000 + RUNS / 2))) b=$(printf '%040x' $((0x9e000000 + RUNS / 2 + 1)))
found=$(tr -d ' \n' <"$work/full.txt" |
    grep -o '"state":"confirmed","direction":"regression","benchmark":"op/gen/fwd/bench000/cpu","section":"test","commit":"[0-9a-f]*"' |
    grep -c -e "$a" -e "$b")
"$GEN" --append "$DB" $((RUNS + 1)) >/dev/null || { echo "perf_detect_scale: perf_gen --append failed"; exit 1; }
t0=$(now)
"$XO" perf detect --db "$DB" >"$work/incr.txt"
rc=$?
incr=$(elapsed "$t0")
[ $rc -le 1 ] || { echo "perf_detect_scale: detect failed (exit $rc)"; cat "$work/incr.txt"; exit 1; }
kept=$(sed -n 's/^note: \([0-9]*\) series had no new run.*/\1/p' "$work/incr.txt")
printf 'perf_detect_scale: %s, %s runs (10 series, generated in %s s): detect %s s (target < 30; every series fitted), after one new run %s s (%s of 10 series kept without a fit), planted step found on %s of 2 testbeds, load %s\n' \
    "$engine" "$RUNS" "$gen" "$full" "$incr" "${kept:-0}" "$found" "$(cut -d' ' -f1-3 /proc/loadavg)"
awk -v f="$full" -v n="$found" 'BEGIN { exit !(f < 30 && n == 2) }'
