#!/usr/bin/env python3
"""bench_vs_pytorch.py - `xo bench` and its PyTorch peer side by side in one run.

The target "at least 10x faster than PyTorch's CPU build" is a ratio, and on a
shared 2-core VM two runs taken minutes apart are not comparable (load and
slow phases move either side by 1.5x). So this script alternates the two in
rounds: round r runs `xo bench --json --repeat K` then
`peer_pytorch.py --json --repeat K`, and the next round starts with the other
one, so drift hits both sides alike. Reported per workload (predict 4000 at
batch 32, predict 4000 as one batch, one training epoch): the median over the
rounds of each side's per-round median, and the ratio PyTorch / xo per round
(median and worst round). Also prints the torch version and thread count and
the xo backend line (BLAS core type, ISA, threads).

Usage: bench_vs_pytorch.py [--xo build/cli/xo] [--rounds 5] [--repeat 5]
       [--threads 2] [--json]
Exit 0; 2 on bad usage or a failing child; 3 when no python with torch is
found (Debian: apt-get install python3-torch, then /usr/bin/python3 has it).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

WORKLOADS = [
    ("predict 4000 at batch 32", "predict_ms_batch32_median"),
    ("predict 4000 as one batch", "predict_ms_one_batch_median"),
    ("one epoch (12800 at batch 512 + 3200 validation)", "epoch_ms_median"),
]
HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg, code=2):
    print(f"bench_vs_pytorch.py: {msg}", file=sys.stderr)
    sys.exit(code)


def torch_python():
    """A python interpreter that imports torch: this one, else /usr/bin/python3."""
    for py in (sys.executable, "/usr/bin/python3", shutil.which("python3")):
        if py and subprocess.run([py, "-c", "import torch"], capture_output=True).returncode == 0:
            return py
    return None


def run_json(cmd, env):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        fail(f"{' '.join(cmd)} exited {p.returncode}: {last}")
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        fail(f"{' '.join(cmd)} printed no JSON")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--xo", default="build/cli/xo", help="the xo binary (default build/cli/xo)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.rounds < 1 or a.repeat < 1 or a.threads < 1:
        fail("--rounds, --repeat and --threads must be >= 1")
    if not os.access(a.xo, os.X_OK):
        fail(f"{a.xo}: not an executable (build first: cmake -S . -B build && "
             "cmake --build build, or pass --xo)")
    py = torch_python()
    if not py:
        fail("no python3 with torch found (apt-get install python3-torch)", 3)
    env = dict(os.environ)
    xo_cmd = [a.xo, "bench", "--device", "cpu", "--threads", str(a.threads),
              "--repeat", str(a.repeat), "--json"]
    peer_cmd = [py, os.path.join(HERE, "peer_pytorch.py"), "--threads", str(a.threads),
                "--repeat", str(a.repeat), "--json"]
    xo_runs, peer_runs = [], []
    for r in range(a.rounds):
        order = [("xo", xo_cmd), ("peer", peer_cmd)]
        if r % 2:
            order.reverse()
        for who, cmd in order:
            res = run_json(cmd, env)
            (xo_runs if who == "xo" else peer_runs).append(res)
        if not a.json:
            print(f"round {r + 1}/{a.rounds}: " + ", ".join(
                f"{name.split(' (')[0]} xo {xo_runs[-1][key]:.3f} ms / torch "
                f"{peer_runs[-1][key]:.3f} ms" for name, key in WORKLOADS), flush=True)
    out = {
        "xo_backend": xo_runs[0].get("describe", ""),
        "machine": f"{xo_runs[0].get('cpu', '?')}, {xo_runs[0].get('cores', '?')} cores",
        "torch_version": peer_runs[0]["torch_version"],
        "torch_threads": peer_runs[0]["threads"],
        "xo_threads": xo_runs[0].get("threads"),
        "rounds": a.rounds, "repeat": a.repeat, "workloads": [],
    }
    for name, key in WORKLOADS:
        xs = [x[key] for x in xo_runs]
        ps = [p[key] for p in peer_runs]
        ratios = [p / x for p, x in zip(ps, xs)]
        out["workloads"].append({
            "workload": name, "xo_ms_median": statistics.median(xs),
            "torch_ms_median": statistics.median(ps),
            "ratio_median": statistics.median(ratios), "ratio_worst_round": min(ratios)})
    if a.json:
        print(json.dumps(out))
        return 0
    print(f"\nmachine: {out['machine']}")
    print(f"xo: {out['xo_backend']}")
    print(f"torch {out['torch_version']}, {out['torch_threads']} threads; "
          f"{a.rounds} alternating rounds of {a.repeat} runs each (medians of rounds' medians)")
    print(f"{'workload':50s} {'xo ms':>9s} {'torch ms':>10s} {'torch/xo':>9s} {'worst round':>12s}")
    for w in out["workloads"]:
        print(f"{w['workload']:50s} {w['xo_ms_median']:9.3f} {w['torch_ms_median']:10.3f} "
              f"{w['ratio_median']:8.1f}x {w['ratio_worst_round']:11.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
