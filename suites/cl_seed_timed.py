#!/usr/bin/env python3
"""cl_seed_timed.py XO - `xo seed --device cl --json` reports untimed_events:
the OpenCL events whose profiled times could not be read.
On a working driver every event of the split's steps is timed, so the field
is there and 0, next to a split with launches. Exit 0 pass, 1 fail, 77 no
OpenCL device (unless XO_REQUIRE_OPENCL is set)."""
import json
import os
import subprocess
import sys


def main():
    xo = sys.argv[1]
    p = subprocess.run([xo, "seed", "--device", "cl", "--epochs", "1", "--repeat", "1",
                        "--json"], capture_output=True, text=True, timeout=300)
    if p.returncode == 2 and "OpenCL" in p.stderr and not os.environ.get("XO_REQUIRE_OPENCL"):
        print(f"SKIP: {p.stderr.strip()}")
        return 77
    if p.returncode != 0:
        print(f"exit {p.returncode}: {p.stderr}")
        return 1
    d = json.loads(p.stdout)
    assert len(d) == 1 and d[0]["device"] == "cl", d
    r = d[0]
    assert r["untimed_events"] == 0, r
    assert r["launches_per_step"] >= 1, r
    for key in ("enqueue_ms", "h2d_ms", "kernel_ms", "d2h_ms", "wait_ms"):
        assert r[key] >= 0, (key, r)
    # the text split says nothing about untimed events when there are none
    assert "untimed_events" not in p.stderr, p.stderr
    print({k: r[k] for k in ("launches_per_step", "kernel_ms", "untimed_events")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
