#!/usr/bin/env bash
# perfdb_inject.sh XO - strings from a store reach the
# report's gnuplot script and HTML and must never run anything there.
# `perf import` refuses such a peer name up front (exit 2), so the hostile
# name is written into the store the way a crafted or foreign store would
# hold it; the report must then run nothing (gnuplot's system(), backquotes,
# an '@' macro) and escape it in the HTML. Fails on the code that pasted
# names into the gnuplot script.
set -u
XO=$1
command -v gnuplot >/dev/null || exit 0
rm -rf inj.sqlite* rep PWNED PWNED2 peer.json err.txt
EVIL="x'; system('touch PWNED'); \`touch PWNED2\` '@evil<img src=x onerror=alert(1)>"
"$XO" perf record --db inj.sqlite --filter '^model/seed/predict/b(1|8)/ref$' --no-progress \
    >/dev/null || exit 1
printf '{"results":[{"benchmark":"predict","batch":8,"samples_s":[1e-4,1.1e-4]}]}' >peer.json
"$XO" perf import --db inj.sqlite --peer "$EVIL" --json peer.json 2>err.txt
rc=$?
cat err.txt
[ $rc -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] || { echo "import accepted a hostile peer name"; exit 1; }
"$XO" perf import --db inj.sqlite --peer evilpeer --json peer.json >/dev/null || exit 1
q=${EVIL//\'/\'\'}
sqlite3 inj.sqlite "UPDATE benchmarks SET name = replace(name, 'evilpeer', '$q'),
    params = replace(params, 'evilpeer', '$q'), device = '$q' WHERE device = 'evilpeer'" || exit 1
[ "$(sqlite3 inj.sqlite "SELECT count(*) FROM benchmarks WHERE device = '$q'")" = 1 ] || exit 1
# a probe row of the hostile device (table probes as perf
# record writes it from schema version 4; created here when absent)
sqlite3 inj.sqlite "CREATE TABLE IF NOT EXISTS probes(run_id INTEGER NOT NULL, device TEXT NOT NULL,
    launch_s REAL, enqueue_s REAL, sync_s REAL, h2d_lat_s REAL, h2d_bw REAL, d2h_lat_s REAL,
    d2h_bw REAL, flops REAL, mem_bw REAL, handoff_s REAL, units INTEGER, wall_s REAL,
    PRIMARY KEY(run_id, device));
    INSERT INTO probes(run_id, device, launch_s) VALUES(1, '$q', 4e-5)" || exit 1
"$XO" perf detect --db inj.sqlite >/dev/null
"$XO" perf report --db inj.sqlite --out rep || exit 1
for f in PWNED PWNED2 rep/PWNED rep/PWNED2; do
    [ ! -e "$f" ] || { echo "the report ran a command from the store: $f exists"; exit 1; }
done
grep -q 'cl_label' rep/plots.gp || exit 1
grep -q 'x&#39;; system' rep/index.html || { echo "the peer name is missing from the HTML"; exit 1; }
grep -q 'Device probe' rep/index.html || { echo "the probe row is missing from the HTML"; exit 1; }
! grep -q '<img src=x' rep/index.html || { echo "the HTML holds the name unescaped"; exit 1; }
echo "report ran nothing from the store and escaped the name"
