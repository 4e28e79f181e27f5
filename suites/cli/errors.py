#!/usr/bin/env python3
"""errors.py XO SHAPES_DIR - bad input to the commands
(check, summary, bench, seed) gives exit 2 and one line on stderr
that names what was found: the missing key, the key the op does not take
(with the keys it does), the unknown op (with the ops there are), the file
and line. Exit 0 pass, 1 fail.
"""
import os
import re
import subprocess
import sys
import tempfile


def main():
    xo, tmp = sys.argv[1], tempfile.mkdtemp(prefix="xo-errors-")
    shapes = os.path.join(tmp, "cases.txt")
    with open(shapes, "w") as f:
        f.write("relu batch=2 len=3 ch=2\n# a comment\ndense ch=4 units=2 filters=3\n")
    spec = os.path.join(tmp, "bad.model")
    with open(spec, "w") as f:
        f.write("input 29 1\nconv1d filters=16 activation=relu\n")
    table = [
        (["check", "--op", "conv1d", "len=29", "ch=1", "filters=16"],
         r"conv1d needs kernel_size=N \(a required argument in Keras"),
        (["check", "--op", "conv1d", "len=29", "kernel_size=3"], r"conv1d needs filters=N"),
        (["check", "--op", "dense", "ch=3"], r"dense needs units=N"),
        (["check", "--op", "dropout", "ch=3"], r"dropout needs rate=N"),
        (["check", "--op", "relu", "len=4", "filters=3"],
         r"relu takes no key 'filters' \(its keys: batch len ch\)"),
        (["check", "--op", "conv3d"], r"unknown op 'conv3d' \(ops: conv1d, max_pooling1d, .*dense"),
        (["check", "--shapes", shapes],
         re.escape(shapes) + r":3: dense takes no key 'filters' \(its keys: batch ch use_bias"),
        (["summary", "--model", spec], re.escape(spec) + r":2: .*kernel_size"),
        (["summary", "--model", tmp], re.escape(tmp) + r": is a directory, not a model spec"),
        (["summary"], r"--model M is required"),
        (["seed", "--repeat", "0"], r"--repeat 0: expected an integer in 1\.\.101"),
        (["seed", "--predict-batch", "0"],
         r"--predict-batch 0: expected an integer in 1\.\.12800"),
        (["bench", "--repeat", "x"], r"--repeat must be 1\.\.1000"),
    ]
    bad = 0
    for argv, pattern in table:
        p = subprocess.run([xo] + argv, capture_output=True, text=True, timeout=120)
        err = p.stderr.strip()
        ok = p.returncode == 2 and "\n" not in err and re.search(pattern, err)
        print(f"{'ok  ' if ok else 'FAIL'} xo {' '.join(argv)}: exit {p.returncode}: {err}")
        bad += not ok
    for f in (shapes, spec):
        os.unlink(f)
    os.rmdir(tmp)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
