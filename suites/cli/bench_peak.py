#!/usr/bin/env python3
"""bench_peak.py XO [LEVEL...] - `xo bench --json` never reports a kernel above the
measured FMA peak without saying why.

For each ISA level given (default: the one the cpu backend picks here; the
levels are scalar, avx2, avx512, and test_peak.c checks every level's peak
loop on its own):
 - the output is valid JSON;
 - an op whose GFLOP/s exceed the run's measured N-thread peak carries an
   `over_peak` reason (a string), and its `peak_share` says the same;
 - and the physical claim itself: a kernel of level L cannot beat the FMA
   rate of level L, so at least one of up to ATTEMPTS runs has every op at or
   below the peak. (The peak is timed in CPU time, so load cannot lower it;
   a frequency step can push a single run over. Before the fix the AVX2 peak
   loop spilled accumulators and was timed in wall time, and on a quiet
   machine the AVX2 kernels came out at ~153% of it in every run.)
Exit 0 pass, 1 fail, 77 skip.
"""
import json
import os
import subprocess
import sys

ATTEMPTS = 4


def run(xo, level):
    env = dict(os.environ)
    if level:
        env["XO_CPU_ISA"] = level
    p = subprocess.run([xo, "bench", "--json", "--repeat", "1"], env=env,
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def main():
    xo = sys.argv[1]
    tested = 0
    for level in sys.argv[2:] or [""]:
        for attempt in range(ATTEMPTS):
            rc, out, err = run(xo, level)
            if rc == 2 and "supports at most" in err:
                print(f"{level}: not supported by this CPU, skipped")
                break
            if rc != 0:
                print(f"{level}: xo bench exit {rc}: {err.strip()}")
                return 1
            d = json.loads(out)
            level = level or d["isa"]
            peak = d["peak_gflops_n"]
            if level and d["peak_isa"] != level:
                print(f"{level}: peak measured at {d['peak_isa']}")
                return 1
            over = []
            for op in d["ops"]:
                if op["flops"] <= 0:
                    continue
                share = op["gflops"] / peak
                # peak_share is printed to 4 decimals, gflops to 2
                if abs(share - op["peak_share"]) > 1e-3 + 0.01 / peak:
                    print(f"{level}: {op['shape']}: peak_share {op['peak_share']} "
                          f"but gflops/peak = {share:.4f}")
                    return 1
                if share > 1.0:
                    if not isinstance(op["over_peak"], str) or not op["over_peak"]:
                        print(f"{level}: {op['shape']} {op['dir']} at {100 * share:.1f}% "
                              f"of the {peak} GFLOP/s peak, with no reason given")
                        return 1
                    over.append(f"{op['shape']} {op['dir']} {100 * share:.1f}%")
                elif op["over_peak"] is not None:
                    print(f"{level}: {op['shape']}: over_peak set at {share:.3f}")
                    return 1
            print(f"{level}: attempt {attempt + 1}: peak {peak} GFLOP/s "
                  f"(load {d['load_average']}), over the peak: {over or 'none'}")
            if not over:
                tested += 1
                break
        else:
            print(f"{level}: kernels above the measured peak in all {ATTEMPTS} runs")
            return 1
    return 0 if tested else 77


if __name__ == "__main__":
    sys.exit(main())
