#!/usr/bin/env python3
"""peer_store.py - time the seed model's train_step and predict in PyTorch
(CPU) over the crossover batch sweep and store them in a perf database as the
peer device "pytorch-cpu" (via `xo perf import`), so `xo perf report` draws
PyTorch beside crossover's cpu and cl curves.

The model is scripts/peer_pytorch.py's seed_model() (the same architecture as
DESIGN section 1). One train_step is forward, cross-entropy, backward and one
Adam step (Keras defaults) on a batch already in memory; one predict is a
forward pass with softmax under no_grad. Each benchmark gets a warm-up, then
--samples samples collected round-robin across all benchmarks (like `xo perf
record`); a sample is the wall time of enough back-to-back calls to last
about --target-ms, divided by their number.

Usage: scripts/peer_store.py [--xo PATH] [--db perf.sqlite] [--quick]
       [--samples N] [--threads T] [--json-out FILE] [--no-import]
Exit 0 on success, 2 on bad usage, 3 when torch is not installed (the reason is
printed; ci/nightly.sh skips the peer then).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--xo", default=os.path.join(HERE, "..", "build-release", "cli", "xo"))
    ap.add_argument("--db", default="perf.sqlite")
    ap.add_argument("--peer", default="pytorch-cpu")
    ap.add_argument("--quick", action="store_true", help="batches 1, 8, 64, 512, 4096")
    ap.add_argument("--samples", type=int, default=15)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--target-ms", type=float, default=10.0)
    ap.add_argument("--json-out", default=None, help="also keep the JSON here")
    ap.add_argument("--no-import", action="store_true", help="print the JSON only")
    a = ap.parse_args()
    if a.samples < 10:
        print("peer_store.py: --samples must be >= 10", file=sys.stderr)
        return 2
    if not a.no_import and not os.access(a.xo, os.X_OK):
        # checked before timing anything: the import at the end needs it
        print(f"peer_store.py: --xo {a.xo}: not an executable (build xo first, "
              "or point --xo at it)", file=sys.stderr)
        return 2
    try:
        import torch
        import torch.nn as nn
    except ImportError as e:
        print(f"peer_store.py: PyTorch is not installed ({e}); peer skipped",
              file=sys.stderr)
        return 3
    sys.path.insert(0, HERE)
    from peer_pytorch import seed_model

    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    batches = [1, 8, 64, 512, 4096] if a.quick else [2 ** k for k in range(14)]
    benches = []
    for b in batches:
        model = seed_model()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-7)
        loss_fn = nn.CrossEntropyLoss()
        x = torch.rand(b, 1, 29)
        y = torch.randint(0, 12, (b,))

        def train_step(model=model, opt=opt, loss_fn=loss_fn, x=x, y=y):
            model.train()
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
            opt.step()

        def predict(model=model, x=x):
            model.eval()
            with torch.no_grad():
                torch.softmax(model(x), dim=1)

        benches.append({"benchmark": "train_step", "batch": b, "fn": train_step})
        benches.append({"benchmark": "predict", "batch": b, "fn": predict})

    for bm in benches:  # warm-up, then calibration on the fastest of five calls
        bm["fn"]()
        t = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            bm["fn"]()
            t = min(t, time.perf_counter() - t0)
        bm["reps"] = max(1, min(100000, int(a.target_ms * 1e-3 / max(t, 1e-9)) + 1))
        bm["samples_s"] = []
    rng = random.Random(0x5eed)
    for _ in range(a.samples):
        order = list(range(len(benches)))
        rng.shuffle(order)
        for i in order:
            bm = benches[i]
            t0 = time.perf_counter()
            for _ in range(bm["reps"]):
                bm["fn"]()
            bm["samples_s"].append((time.perf_counter() - t0) / bm["reps"])

    doc = {
        "device": a.peer,
        "model": "seed",
        "note": f"torch {torch.__version__}, {torch.get_num_threads()} threads",
        "results": [{"benchmark": bm["benchmark"], "batch": bm["batch"],
                     "samples_s": bm["samples_s"]} for bm in benches],
    }
    text = json.dumps(doc)
    path = a.json_out or os.path.join(os.path.dirname(os.path.abspath(a.db)),
                                      f"peer-{a.peer}.json")
    with open(path, "w") as f:
        f.write(text + "\n")
    if a.no_import:
        print(text)
        return 0
    return subprocess.call([a.xo, "perf", "import", "--db", a.db, "--peer", a.peer,
                            "--json", path])


if __name__ == "__main__":
    sys.exit(main())
