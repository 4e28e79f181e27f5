#!/usr/bin/env python3
"""perf_words.py XO SOURCE_DIR - what the perf commands say to a person:
- a report or advice for a model the store does not hold: exit 2, one line
  listing the models it holds, and no report folder written;
- `report --model model.keras` is headed "Answer for model", never
  "model model"; no section heading without its content;
- `record --model FILE` times that model alone unless --filter asks for more;
- `--device gpu` (seed, explain, perf record): exit 2, one line that says
  what to install (or that cl is the GPU);
- where the only OpenCL device is a CPU (PoCL): seed, explain, advise and
  the report say "no GPU here: cl is OpenCL on this machine's CPU";
- explain prints progress on stderr (a line per device and batch), and
  --no-progress silences it.
Exit 0 pass, 1 fail.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

NO_GPU = "no GPU here: cl is OpenCL on this machine's CPU"


def run(*args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)


def check_colours(src, check):
    """One colour per device in every plot: common.gp's devcolor gives a
    device the same colour whatever its place in a plot or its testbed
    suffix, different devices different colours, and both the crossover and
    the history plots colour their lines with it."""
    scripts = os.path.join(src, "scripts")
    devs = ["cpu", "cl", "ref", "pytorch-cpu"]
    expr = ", ".join(f"devcolor('{d}', {i})" for i in (1, 2, 3) for d in devs)
    p = run("gnuplot", "-e", f"load '{scripts}/common.gp'; print {expr}, "
            "devcolor('cpu@host', 4), devcolor('cl:0:1', 4)")
    got = p.stderr.split()
    check(p.returncode == 0 and len(got) == 14, "gnuplot could not evaluate devcolor", p)
    if len(got) == 14:
        n = len(devs)
        check(all(got[k] == got[k % n] for k in range(3 * n)),
              f"a device's colour depends on its place: {got}")
        check(len(set(got[:n])) == n, f"two devices share a colour: {got[:n]}")
        check(got[12] == got[0] and got[13] == got[1], f"a suffix changes the colour: {got}")
    for gp in ("crossover.gp", "history.gp"):
        text = open(os.path.join(scripts, gp)).read()
        plots = [l for l in text.splitlines() if "with yerrorlines" in l or "with points" in l]
        check(plots and all("devcolor(" in l for l in plots if "red" not in l),
              f"{gp}: a line not coloured by devcolor")


def main():
    xo, src = sys.argv[1], sys.argv[2]
    fails = []

    def check(cond, what, p=None):
        if not cond:
            fails.append(what + (f"\n  exit {p.returncode}\n  stdout: {p.stdout[-800:]}\n"
                                 f"  stderr: {p.stderr[-800:]}" if p else ""))

    devs = run(xo, "devices").stdout
    cl_line = next((l for l in devs.splitlines() if l.startswith("cl ")), "")
    have_cl = " available " in cl_line
    pocl = have_cl and re.search(r"PoCL|Portable Computing Language|pthread", cl_line)
    tmp = tempfile.mkdtemp(prefix="xo-perf-words-")
    try:
        db = os.path.join(tmp, "s.sqlite")
        p = run(xo, "perf", "record", "--db", db, "--quick", "--no-progress", "--filter",
                r"^model/seed/predict/b(1|8)/(cpu|cl)$")
        check(p.returncode == 0, "record failed", p)

        # a model the store does not hold
        for cmd in (("advise",), ("report", "--out", os.path.join(tmp, "rep-x"))):
            p = run(xo, "perf", *cmd, "--db", db, "--model", "nosuch.keras")
            check(p.returncode == 2 and p.stderr.count("\n") == 1 and
                  "it holds: seed" in p.stderr and not p.stdout,
                  f"perf {cmd[0]} --model nosuch.keras: want exit 2, one line listing seed", p)
        check(not os.path.exists(os.path.join(tmp, "rep-x")), "report wrote a folder for no model")

        # the heading: a Keras file named model.keras is stored as "model"
        if shutil.which("gnuplot"):
            rep = os.path.join(tmp, "rep")
            p = run(xo, "perf", "report", "--db", db, "--model",
                    os.path.join(tmp, "seed.keras"), "--out", rep)
            check(p.returncode == 0, "report --model seed.keras failed", p)
            html = open(os.path.join(rep, "index.html")).read() if p.returncode == 0 else ""
            check("Answer for seed," in html and "Answer: model" not in html,
                  "report heading is not 'Answer for seed'")
            # every heading has content before the next heading of its rank
            # or above (an h2 may open with its first h3)
            check(not re.search(r"</h3>\s*<h[23]|</h2>\s*<h2", html),
                  "a heading without its content")
            if pocl:
                check(NO_GPU in html, "report does not say there is no GPU")
            check("none: xo perf detect has stored no change" in html,
                  "an empty Changes table under its heading")
            # one run: one table of its results, not a one-point plot each
            check("The run's results" in html and "hist_" not in html and
                  not any(f.startswith("hist_") for f in os.listdir(rep)),
                  "a single run drew history plots instead of one table")
            check_colours(src, check)

        # record --model FILE: that model's benchmarks alone
        model = os.path.join(src, "models", "seed.model")
        p = run(xo, "perf", "record", "--list", "--quick", "--model", model)
        names = p.stdout.split()
        check(p.returncode == 0 and names and all(n.startswith("model/") for n in names),
              "record --model lists benchmarks other than the model's", p)
        p = run(xo, "perf", "record", "--list", "--quick", "--model", model, "--filter", ".")
        check(any(n.startswith("op/") for n in p.stdout.split()),
              "record --model --filter . lost the op set", p)

        # --device gpu names what to install (or where the GPU is)
        for cmd in (("seed",), ("explain",), ("perf", "record", "--list")):
            p = run(xo, *cmd, "--device", "gpu")
            want = (NO_GPU if pocl else "install") if not have_cl or pocl else "--device cl"
            check(p.returncode == 2 and p.stderr.count("\n") == 1 and want in p.stderr and
                  (not pocl or "install" in p.stderr) and not p.stdout,
                  f"{' '.join(cmd)} --device gpu: want exit 2, one line with '{want}'", p)

        # explain's progress and its silence
        ex = ("explain", "--device", "cpu", "--batch", "1", "--batch", "2", "--repeat", "1",
              "--budget", "0.05")
        p = run(xo, *ex)
        check(p.returncode == 0 and "xo explain: cpu: batch 2 (2 of 2)" in p.stderr,
              "explain shows no progress", p)
        p = run(xo, *ex, "--no-progress")
        check(p.returncode == 0 and "xo explain:" not in p.stderr, "--no-progress is not silent", p)

        if pocl:
            p = run(xo, "perf", "advise", "--db", db)
            check(p.returncode == 0 and NO_GPU in p.stdout, "advise does not say there is no GPU", p)
            p = run(xo, "explain", "--device", "cl", "--batch", "1", "--repeat", "1", "--budget",
                    "0.05", "--no-progress")
            check(p.returncode == 0 and NO_GPU in p.stdout, "explain does not say there is no GPU", p)
            p = run(xo, "seed", "--device", "cl", "--epochs", "1", "--repeat", "1")
            check(p.returncode == 0 and p.stdout.count(NO_GPU) == 2,
                  "seed does not say there is no GPU (at the device and under the table)", p)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in fails:
        print("FAIL", f)
    print("perf_words:", "all pass" if not fails else f"{len(fails)} failed",
          "(cl is PoCL)" if pocl else "")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
