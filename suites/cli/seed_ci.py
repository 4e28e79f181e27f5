#!/usr/bin/env python3
"""seed_ci.py XO - `xo seed` gives medians over repeats with an interval:
the same device run twice reports, for each timing, a
median inside its own 95% interval, the number of repeats, and the table
marks ratios whose intervals overlap. Before, predict was one run and the
table compared single runs (a device against itself read 1.77x). And
--predict-batch N times predict_s at batch N (the lstm zoo workload).
Exit 0 pass, 1 fail.
"""
import json
import subprocess
import sys


def main():
    xo = sys.argv[1]
    p = subprocess.run([xo, "seed", "--device", "cpu", "--device", "cpu", "--epochs", "2",
                        "--repeat", "3", "--json"], capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        print(f"exit {p.returncode}: {p.stderr}")
        return 1
    d = json.loads(p.stdout)
    assert len(d) == 2, d
    for r in d:
        assert r["repeat"] == 3, r
        for key in ("train_ms_per_step", "predict_s", "predict_s_one_batch"):
            lo, hi = r[key + "_ci_lo"], r[key + "_ci_hi"]
            assert 0 < lo <= r[key] <= hi, (key, lo, r[key], hi)
        # one diagnosis sentence per device from its split
        assert r["diagnosis"].startswith("at batch 512 the cpu train step is "), r
        assert "predicted_diagnosis" in r and "predicted_train_ms_per_step" in r, r
    assert p.stderr.count("  at batch 512 the cpu train step is ") == 2, p.stderr
    # the same data and seed: the same accuracies on both runs
    assert d[0]["val_accuracy"] == d[1]["val_accuracy"], d
    # the human table (stderr with --json) names the interval and the marker
    assert "[95% CI]" in p.stderr and "'~'" in p.stderr, p.stderr
    rows = [l for l in p.stderr.splitlines() if l.startswith("cpu ")]
    assert len(rows) == 2, p.stderr
    # the best device of each column reads 1.00x~ (overlaps itself)
    assert any(l.split()[-2] == "1.00x~" for l in rows), rows
    assert any(l.split()[-1] == "1.00x~" for l in rows), rows
    print("\n".join(rows))
    # --predict-batch N: predict_s timed at batch N (scripts/zoo.py --only
    # lstm); the default is Keras's 32
    assert all(r["predict_batch"] == 32 for r in d), d
    p = subprocess.run([xo, "seed", "--device", "cpu", "--epochs", "1", "--repeat", "1",
                        "--predict-batch", "400", "--json"], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)[0]["predict_batch"] == 400, p.stdout
    assert "(batch 400; median of 1)" in p.stderr, p.stderr
    return 0


if __name__ == "__main__":
    sys.exit(main())
