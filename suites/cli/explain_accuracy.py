#!/usr/bin/env python3
"""explain_accuracy.py XO [--json FILE] [--require] [xo explain options...] -
the cost model's accuracy target as a benchmark, not a unit test: runs `xo
explain --json` (default: the seed model, cpu and cl, batch 1..8192), prints one
row per point (measured, predicted, ratio, measured and predicted dominant part)
and the summary line: points whose prediction is within 2x of the measurement
(0.5 <= predicted / measured <= 2) and points whose predicted dominant part is
the measured one. --json FILE keeps the raw output; --require exits 1 when
either is under 80% (the target). Used by ci/nightly.sh (stage explain).
"""
import json
import subprocess
import sys


def main():
    xo, args = sys.argv[1], sys.argv[2:]
    keep, require = None, False
    if "--json" in args:
        i = args.index("--json")
        keep = args[i + 1]
        del args[i:i + 2]
    if "--require" in args:
        args.remove("--require")
        require = True
    p = subprocess.run([xo, "explain", "--json"] + args, capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        print(f"xo explain: exit {p.returncode}: {p.stderr.strip()}")
        return 1
    if keep:
        with open(keep, "w") as f:
            f.write(p.stdout)
    d = json.loads(p.stdout)
    parts = ("launch", "transfer", "compute", "other")

    def dominant(pt, kind):
        v = [pt[f"{kind}_{q}_s"] or 0 for q in parts]
        return parts[v.index(max(v))]

    n = within = match = 0
    print(f"{'device':8} {'what':10} {'batch':>6} {'measured':>11} {'predicted':>11} "
          f"{'ratio':>6}  measured/predicted dominant")
    for pt in d["points"]:
        if pt["predicted_s"] is None:
            continue
        n += 1
        r = pt["predicted_s"] / pt["measured_s"]
        ok = 0.5 <= r <= 2
        dm, dp = dominant(pt, "measured"), dominant(pt, "predicted")
        within += ok
        match += dm == dp
        print(f"{pt['device']:8} {pt['what']:10} {pt['batch']:6d} {pt['measured_s']:11.3e} "
              f"{pt['predicted_s']:11.3e} {r:6.2f}{' ' if ok else '*'} {dm}/{dp}")
    for c in (d.get("crossover"), d.get("crossover_predict")):
        if c:
            print(f"crossover {c['what']}: measured {c['measured_batch']} "
                  f"[{c['measured_lo']}, {c['measured_hi']}], predicted {c['predicted_batch']}")
            for w in c["what_if"]:
                print(f"  what if: {w}")
    if not n:
        print("no predicted points (no probe for these devices)")
        return 1 if require else 0
    print(f"xo explain {d['wall_s']:.1f} s; within 2x: {within}/{n} ({100 * within / n:.0f}%), "
          f"dominant cost as measured: {match}/{n} ({100 * match / n:.0f}%)")
    if require and (within < 0.8 * n or match < 0.8 * n):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
