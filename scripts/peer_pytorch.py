#!/usr/bin/env python3
"""peer_pytorch.py - the seed workloads in PyTorch's CPU build, as a peer for
`xo bench --device cpu` (docs/cpu.md).

Same architecture as the seed model (DESIGN section 1), channels-first as torch
likes it: Conv1d(1,16,3)+ReLU, MaxPool1d(3), Conv1d(16,32,3)+ReLU, MaxPool1d(3),
Flatten (64), Dropout(0.5), Linear(64,32)+Sigmoid, Linear(32,12) (softmax in the
loss for training, explicit for predict). Workloads:
  predict 4000 samples at batch 32 (125 calls) and as one batch of 4000;
  one epoch: 12800 samples at batch 512 (25 Adam steps, Keras defaults) plus a
  forward pass over 3200 validation samples.
Prints the torch version, thread count and the medians (and minimums) of
--repeat runs after a warm-up; --json prints one object. Exit 2 on bad
usage, 3 when torch is not installed (use /usr/bin/python3 with Debian's
python3-torch).
"""
import argparse
import json
import statistics
import sys
import time

try:
    import torch
    import torch.nn as nn
except ImportError as e:  # the PATH python3 may lack torch; say which to use
    print(f"peer_pytorch.py: PyTorch is not installed for {sys.executable} ({e}); "
          "try /usr/bin/python3 with Debian's python3-torch", file=sys.stderr)
    sys.exit(3)


def seed_model():
    return nn.Sequential(
        nn.Conv1d(1, 16, 3), nn.ReLU(), nn.MaxPool1d(3),
        nn.Conv1d(16, 32, 3), nn.ReLU(), nn.MaxPool1d(3),
        nn.Flatten(), nn.Dropout(0.5),
        nn.Linear(64, 32), nn.Sigmoid(),
        nn.Linear(32, 12))


def predict(model, x, batch):
    model.eval()
    with torch.no_grad():
        outs = [torch.softmax(model(x[i:i + batch]), dim=1)
                for i in range(0, x.shape[0], batch)]
    return torch.cat(outs)


def epoch(model, opt, loss_fn, xt, yt, xv, yv, batch):
    model.train()
    perm = torch.randperm(xt.shape[0])
    for i in range(0, xt.shape[0], batch):
        idx = perm[i:i + batch]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xt[idx]), yt[idx])
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        out = model(xv)
        loss_fn(out, yv)
        (out.argmax(1) == yv).float().mean()


def timed(fn, repeat):
    fn()  # warm-up
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), min(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.threads < 1 or a.repeat < 1:
        print("peer_pytorch.py: --threads and --repeat must be >= 1", file=sys.stderr)
        return 2
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = seed_model()
    x = torch.rand(16000, 1, 29)
    y = torch.randint(0, 12, (16000,))
    xt, yt, xv, yv = x[:12800], y[:12800], x[12800:], y[12800:]
    xp = torch.rand(4000, 1, 29)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()

    p32 = timed(lambda: predict(model, xp, 32), a.repeat)
    p1 = timed(lambda: predict(model, xp, 4000), a.repeat)
    ep = timed(lambda: epoch(model, opt, loss_fn, xt, yt, xv, yv, 512), a.repeat)
    res = {
        "peer": "pytorch",
        "torch_version": torch.__version__,
        "threads": torch.get_num_threads(),
        "repeat": a.repeat,
        "predict_ms_batch32_median": p32[0] * 1e3, "predict_ms_batch32_min": p32[1] * 1e3,
        "predict_ms_one_batch_median": p1[0] * 1e3, "predict_ms_one_batch_min": p1[1] * 1e3,
        "epoch_ms_median": ep[0] * 1e3, "epoch_ms_min": ep[1] * 1e3,
    }
    if a.json:
        print(json.dumps(res))
        return
    print(f"torch {res['torch_version']}, threads {res['threads']}, "
          f"median and min of {a.repeat} runs after a warm-up")
    print(f"seed predict 4000 at batch 32:  median {p32[0]*1e3:.3f} ms  min {p32[1]*1e3:.3f} ms")
    print(f"seed predict 4000 as one batch: median {p1[0]*1e3:.3f} ms  min {p1[1]*1e3:.3f} ms")
    print(f"seed epoch (12800 at batch 512 + 3200 validation): median {ep[0]*1e3:.3f} ms"
          f"  min {ep[1]*1e3:.3f} ms")


if __name__ == "__main__":
    sys.exit(main())
