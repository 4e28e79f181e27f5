#!/usr/bin/env bash
# ci/bisect_check.sh XO [OUT_JSON] - bisect end to end: `xo perf
# bisect` on a planted history (ci/nightly.sh's stage `bisect` runs this; run
# it alone to measure the target). A temporary clone of this tree's HEAD gets
# 5 commits; the third runs the cpu relu forward twice (a 2x slowdown of one
# op), the others touch a text file. bisect --good (the clone's HEAD before
# them) --bad (after) must name the third, exactly, with no false step (no
# commit before it called bad, none after it called good). Its own store and
# builds in a temporary directory; the last line says found/MISSED, the
# commit named, the wall time and the rounds per tested commit (target: under
# 15 minutes on the 2-core CI machine). bisect's progress (its "too close to
# call" lines among them) is printed before that.
# Exit: 0 found exactly, 1 missed or failed.
set -u -o pipefail
XO=${1:?usage: ci/bisect_check.sh XO [OUT_JSON]}
OUT_JSON=${2:-}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

command -v git >/dev/null && git -C "$ROOT" rev-parse --verify -q HEAD >/dev/null || {
    echo "bisect: skipped (no git history)"
    exit 0
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xo-bisect-check-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src
start=$(date +%s)
echo "bisect check: load $(cut -d' ' -f1-3 /proc/loadavg) at the start"
git clone --quiet --shared "$ROOT" "$src" &&
    git -C "$src" checkout --quiet --detach HEAD || exit 1
planted=
for i in 1 2 3 4 5; do
    if [ "$i" = 3 ]; then
        python3 - "$src/kernels/cpu.c" <<'PY' || exit 1
import sys
p = sys.argv[1]
s = open(p).read()
old = "\treturn ew_act(be, a, EW_RELU_FWD, false, 1);\n"
assert s.count(old) == 1, "cpu_relu_fwd not found"
s = s.replace(old, "\tew_act(be, a, EW_RELU_FWD, false, 1); /* planted: twice */\n" + old)
open(p, "w").write(s)
PY
    else
        echo "bisect check step $i" >>"$src/docs/bisect-check.txt"
    fi
    git -C "$src" add -A &&
        git -C "$src" -c user.name=nightly -c user.email=nightly@localhost \
            commit --quiet -m "bisect check: step $i$([ "$i" = 3 ] && echo ' (relu forward twice)')" ||
        exit 1
    [ "$i" = 3 ] && planted=$(git -C "$src" rev-parse HEAD)
done
json=$tmp/bisect.json
XO_SOURCE_DIR=$src TMPDIR=$tmp "$XO" perf bisect --db "$tmp/bisect.sqlite" \
    --good HEAD~5 --bad HEAD --device cpu --filter '^op/relu/fwd/.*/cpu$' --quick \
    --threshold 25 --json >"$json" 2>"$tmp/bisect.err"
rc=$?
cat "$tmp/bisect.err"
cat "$json"
# the store stays beside OUT_JSON for a look at the runs afterwards
[ -n "$OUT_JSON" ] && cp "$json" "$OUT_JSON" &&
    sqlite3 "$tmp/bisect.sqlite" ".backup '${OUT_JSON%.json}.sqlite'" 2>/dev/null
secs=$(($(date +%s) - start))
if [ $rc -ne 0 ]; then
    echo "bisect check: MISSED (bisect exit $rc), $secs s"
    exit 1
fi
python3 - "$json" "$planted" "$secs" "$(cut -d' ' -f1-3 /proc/loadavg)" \
    "$(git -C "$src" rev-list --reverse HEAD~5..HEAD | tr '\n' ' ')" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want, secs, load, line = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5].split()
got = d.get("first_bad", {}).get("sha")
pos = {s: i + 1 for i, s in enumerate(line)}
planted = pos[want]
false_steps = [t for t in d.get("tested", [])
               if (t["verdict"] == "bad" and pos[t["sha"]] < planted) or
                  (t["verdict"] == "good" and pos[t["sha"]] >= planted)]
tested = ", ".join("%d:%s/%dr" % (pos[t["sha"]], t["verdict"], t["rounds"])
                   for t in d.get("tested", []))
ok = d.get("outcome") == "found" and got == want and not false_steps
print("bisect check: %s: outcome %s, named %s (commit %s of 5), planted %s (3); "
      "%s s; tested %s; false steps %d; load at the end %s" %
      ("found" if ok else "MISSED", d.get("outcome"), (got or "-")[:12],
       pos.get(got, "-"), want[:12], secs, tested, len(false_steps), load))
sys.exit(0 if ok else 1)
PY
