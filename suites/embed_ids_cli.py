#!/usr/bin/env python3
"""xo train and predict with an embedding's ids at and around input_dim,
each id alone (x of shape (1, 1)), on every device: ids 0 and input_dim - 1
run (exit 0); input_dim, input_dim + 1, -1 and an int64 id beyond int32
exit 2 with one line on stderr that names the id and input_dim, the same on
ref, cpu and cl, and leave the output file or save target as it was."""
import os
import subprocess
import sys

import numpy as np

xo, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
V = 7
spec = os.path.join(work, "ids.model")
with open(spec, "w") as f:
    f.write("input 1 dtype=int32\nembedding input_dim=%d output_dim=3\nflatten\n"
            "dense units=2 activation=softmax\n" % V)
np.save(os.path.join(work, "y.npy"), np.array([[0, 1]], dtype=np.float32))


def run(*args):
    r = subprocess.run([xo, *args], capture_output=True, text=True, cwd=work,
                       stdin=subprocess.DEVNULL)
    print("$ xo", " ".join(args), "->", r.returncode, r.stderr.strip())
    return r


import json  # noqa: E402

# cl where OpenCL opens; where XO_REQUIRE_OPENCL=1 (CI) it must
listed = json.loads(run("devices", "--json").stdout)
devices = [d["device"] for d in listed
           if d["device"] in ("ref", "cpu") or (d["device"] == "cl" and d["available"])]
if os.environ.get("XO_REQUIRE_OPENCL") == "1" and "cl" not in devices:
    sys.exit("cl: no OpenCL device, and XO_REQUIRE_OPENCL=1")
for dev in devices:
    w = os.path.join(work, "w_%s.keras" % dev)
    for i, dt in ((0, np.int32), (V - 1, np.int64)):
        np.save(os.path.join(work, "x.npy"), np.array([[i]], dtype=dt))
        r = run("train", "--model", spec, "--x", "x.npy", "--y", "y.npy", "--save", w,
                "--epochs", "1", "--batch-size", "1", "--device", dev)
        assert r.returncode == 0, r.stderr
        r = run("predict", "--model", spec, "--weights", w, "--input", "x.npy", "--output",
                "p.npy", "--device", dev)
        assert r.returncode == 0, r.stderr
        p = np.load(os.path.join(work, "p.npy"))
        assert p.shape == (1, 2) and abs(p.sum() - 1) < 1e-5, p
    for i, dt in ((V, np.int32), (V + 1, np.int32), (-1, np.int32), (2**31 + V, np.int64)):
        np.save(os.path.join(work, "x.npy"), np.array([[i]], dtype=dt))
        with open(os.path.join(work, "p.npy"), "wb") as f:
            f.write(b"before")
        before = open(w, "rb").read()
        for args in (("predict", "--model", spec, "--weights", w, "--input", "x.npy",
                      "--output", "p.npy"),
                     ("train", "--model", spec, "--x", "x.npy", "--y", "y.npy", "--save", w,
                      "--epochs", "1", "--batch-size", "1")):
            r = run(*args, "--device", dev)
            lines = r.stderr.splitlines()
            assert r.returncode == 2, (dev, i, r.returncode)
            assert len(lines) == 1, (dev, i, lines)
            assert "id %d of sample 0, step 0 is outside [0, input_dim=%d)" % (i, V) in lines[0], \
                lines[0]
        assert open(os.path.join(work, "p.npy"), "rb").read() == b"before"
        assert open(w, "rb").read() == before
print("ok on", ", ".join(devices))
