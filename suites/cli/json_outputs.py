#!/usr/bin/env python3
"""json_outputs.py XO WHAT - the machine-readable outputs are
valid JSON (checked by `python3 -m json.tool`, an independent parser) and
carry the fields a script selects on. WHAT: check, check-shapes, list,
devices, summary, explain, probe (every struct xo_probe field, null
where the device has no such figure; bad devices exit 2 with one line; `xo
perf record` stores one probe row per device it measured); and version
(`xo --version` names the source's commit).
Exit 0 pass, 1 fail.
"""
import json
import os
import re
import subprocess
import sys
import tempfile


def run(argv, expect=0):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if p.returncode != expect:
        raise AssertionError(f"{argv}: exit {p.returncode}, expected {expect}: {p.stderr}")
    # the independent check: json.tool must accept the whole of stdout
    t = subprocess.run([sys.executable, "-m", "json.tool"], input=p.stdout,
                       capture_output=True, text=True)
    if t.returncode != 0:
        raise AssertionError(f"{argv}: not JSON ({t.stderr.strip()}):\n{p.stdout[:2000]}")
    return json.loads(p.stdout)


def check_case(c, isa):
    for k in ("op", "dir", "mode", "backend", "params", "result", "max_error", "bound",
              "repro"):
        assert k in c, f"case without {k}: {c}"
    assert c["result"] in ("pass", "fail"), c
    assert c["repro"].startswith(f"XO_CPU_ISA={isa} xo check --op {c['op']} "), c["repro"]
    if c["result"] == "pass":
        assert c["max_error"] <= c["bound"] or (c["bound"] == 0 and c["max_error"] == 0), c
    for v in c["params"].values():
        assert isinstance(v, (int, float, str)), c


def main():
    xo, what = sys.argv[1], sys.argv[2]
    if what == "check":
        d = run([xo, "check", "--op", "conv1d", "batch=3", "len=11", "ch=2", "filters=4",
                 "kernel_size=3", "padding=same", "--json"])
        assert d["backend"] == "cpu" and d["passed"] == 4 and d["failed"] == 0, d
        for c in d["cases"]:
            check_case(c, d["cpu_isa"])
            assert c["params"]["kernel_size"] == 3 and c["params"]["strides"] == 1, c
            assert c["params"]["padding"] == "same", c
        modes = sorted((c["dir"], c["mode"]) for c in d["cases"])
        assert modes == [("bwd", "exact"), ("bwd", "real"), ("fwd", "exact"),
                         ("fwd", "real")], modes
        # exact cases are bit-exact: bound 0 and no error; real ones have a bound
        for c in d["cases"]:
            if c["mode"] == "exact":
                assert c["bound"] == 0 and c["max_error"] == 0, c
            else:
                assert c["bound"] > 0, c
        # bad input in JSON mode: exit 2, one line on stderr, nothing on stdout
        p = subprocess.run([xo, "check", "--op", "conv1d", "len=9", "filters=2", "--json"],
                           capture_output=True, text=True)
        assert p.returncode == 2 and p.stdout == "" and "kernel_size" in p.stderr, p
    elif what == "check-shapes":
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("# two cases\nrelu batch=2 len=5 ch=3\n"
                    "max_pooling1d batch=2 len=10 ch=3 pool_size=3 padding=same\n")
        try:
            d = run([xo, "check", "--shapes", f.name, "--backend", "ref", "--json"])
        finally:
            os.unlink(f.name)
        assert d["backend"] == "ref" and d["failed"] == 0 and d["passed"] == len(d["cases"])
        ops = {c["op"] for c in d["cases"]}
        assert ops == {"relu", "max_pooling1d"}, ops
        for c in d["cases"]:
            assert c["repro"].startswith("xo check --op"), c  # not the cpu backend: no ISA
            if c["op"] == "max_pooling1d":
                assert c["params"]["strides"] == 3, c  # Keras: strides = pool_size
    elif what == "list":
        d = run([xo, "check", "--list", "--json"])
        ops = {o["op"]: {k["key"]: k for k in o["keys"]} for o in d}
        assert set(ops) >= {"conv1d", "max_pooling1d", "dense", "dropout", "adam"}, ops
        assert ops["conv1d"]["filters"]["required"] and ops["conv1d"]["kernel_size"]["required"]
        assert ops["conv1d"]["strides"]["default"] == 1
        assert ops["conv1d"]["padding"]["default"] == "valid"
        assert ops["max_pooling1d"]["pool_size"]["default"] == 2
        assert ops["max_pooling1d"]["strides"]["default"] == "pool_size"
        assert ops["dense"]["units"]["required"] and ops["dropout"]["rate"]["required"]
        assert ops["adam"]["lr"]["default"] == 0.001 and ops["adam"]["epsilon"]["default"] == 1e-7
    elif what == "devices":
        d = run([xo, "devices", "--json"])
        by = {e["device"]: e for e in d}
        assert set(by) >= {"ref", "cpu"}, by
        cpu = by["cpu"]["cpu"]
        assert cpu["isa"] in ("scalar", "avx2", "avx512") and cpu["threads"] >= 1, cpu
        assert re.fullmatch(r"\d+\.\d+\.\d+", cpu["blas"]["version"]), cpu
        assert cpu["blas"]["core"], cpu
        if "cl" in by and by["cl"]["available"]:
            devs = by["cl"]["opencl"]
            assert devs and sum(1 for x in devs if x["default"]) == 1, devs
            for x in devs:
                assert x["spec"] == f"cl:{x['platform_index']}:{x['device_index']}", x
                assert x["device_type"] in ("gpu", "cpu", "accelerator", "other"), x
                assert x["name"] and x["device_version"] and x["platform"], x
                # the spec selects that very device
                p = subprocess.run([xo, "devices"], capture_output=True, text=True,
                                   env=dict(os.environ, XO_CL_DEVICE=x["spec"][3:]))
                assert x["name"] in p.stdout, (x["spec"], p.stdout)
    elif what == "summary":
        src = sys.argv[3]
        d = run([xo, "summary", "--model", os.path.join(src, "models", "seed.model"),
                 "--json"])
        # Keras's model.summary() of the seed model (DESIGN section 1)
        want = [("conv1d", "Conv1D", [None, 27, 16], 64),
                ("max_pooling1d", "MaxPooling1D", [None, 9, 16], 0),
                ("conv1d_1", "Conv1D", [None, 7, 32], 1568),
                ("max_pooling1d_1", "MaxPooling1D", [None, 2, 32], 0),
                ("flatten", "Flatten", [None, 64], 0),
                ("dropout", "Dropout", [None, 64], 0),
                ("dense", "Dense", [None, 32], 2080),
                ("dense_1", "Dense", [None, 12], 396)]
        got = [(l["name"], l["type"], l["output_shape"], l["params"]) for l in d["layers"]]
        assert got == want, got
        assert d["total_params"] == 4108 and d["trainable_params"] == 4108
        assert d["non_trainable_params"] == 0
        # the memory plan (docs/model.md, "The runtime"): to predict, the two
        # outputs live at once at most, conv1d's 27x16 and its pooling's
        # 9x16 floats; unshared, every output (the flatten a view, dropout's
        # own buffer) 972 floats; training keeps the outputs and their
        # gradients, 2 x 972 unshared
        assert d["activation_bytes_per_sample"] == {
            "predict": 4 * (432 + 144), "predict_unshared": 4 * 972,
            "train": 5808, "train_unshared": 4 * 2 * 972}, d["activation_bytes_per_sample"]
        # Keras 3's output shapes of the golden pooling nets (scripts/make_golden.py)
        for g, want in (
                ("pool_avg", [("Conv1D", [None, 19, 4], 28), ("AveragePooling1D", [None, 19, 4], 0),
                              ("Conv1D", [None, 17, 5], 65), ("AveragePooling1D", [None, 8, 5], 0),
                              ("GlobalAveragePooling1D", [None, 5], 0), ("Dense", [None, 4], 24)]),
                ("pool_gmax", [("Conv1D", [None, 17, 6], 60), ("MaxPooling1D", [None, 9, 6], 0),
                               ("Conv1D", [None, 8, 5], 65), ("AveragePooling1D", [None, 4, 5], 0),
                               ("GlobalMaxPooling1D", [None, 5], 0), ("Dense", [None, 5], 30)])):
            d = run([xo, "summary", "--model",
                     os.path.join(src, "suites", "golden", g, "model.model"), "--json"])
            got = [(l["type"], l["output_shape"], l["params"]) for l in d["layers"]]
            assert got == want, (g, got)
    elif what == "explain":
        # machine-read fields are measured_*, predicted_*,
        # diagnosis; the measured split adds up to the measured time
        argv = [xo, "explain", "--batch", "1", "--batch", "8", "--repeat", "1", "--budget",
                "0.2", "--json"]
        d = run(argv)
        for k in ("model", "devices", "points", "crossover", "crossover_predict", "accuracy",
                  "wall_s"):
            assert k in d, f"explain --json without {k}"
        devs = [x["device"] for x in d["devices"]]
        assert devs[0] == "cpu", devs
        assert len(d["points"]) == 4 * len(devs), len(d["points"])
        for pt in d["points"]:
            for k in ("device", "batch", "what", "launches", "measured_s", "measured_q1",
                      "measured_q3", "measured_launch_s", "measured_transfer_s",
                      "measured_compute_s", "measured_other_s", "predicted_s",
                      "predicted_launch_s", "predicted_transfer_s", "predicted_compute_s",
                      "predicted_other_s", "ratio", "diagnosis", "predicted_diagnosis"):
                assert k in pt, f"point without {k}: {pt}"
            assert pt["what"] in ("train_step", "predict"), pt
            assert pt["batch"] in (1, 8), pt
            assert pt["measured_q1"] <= pt["measured_s"] <= pt["measured_q3"], pt
            parts = sum(pt[f"measured_{p}_s"] for p in ("launch", "transfer", "compute", "other"))
            assert abs(parts - pt["measured_s"]) <= 1e-9 * pt["measured_s"], pt
            assert pt["diagnosis"].startswith(f"at batch {pt['batch']} the {pt['device']} "), pt
            if pt["predicted_s"] is not None:
                parts = sum(pt[f"predicted_{p}_s"]
                            for p in ("launch", "transfer", "compute", "other"))
                assert abs(parts - pt["predicted_s"]) <= 1e-9 * pt["predicted_s"], pt
        if len(devs) >= 2:
            c = d["crossover"]
            for k in ("measured", "measured_batch", "measured_lo", "measured_hi",
                      "predicted_batch", "what_if"):
                assert k in c, f"crossover without {k}: {c}"
            assert c["a"] == "cpu" and c["b"] == devs[1], c
        else:
            assert d["crossover"] is None, d["crossover"]
    elif what == "probe":
        probe_fields = ("launch_s", "enqueue_s", "sync_s", "h2d_lat_s", "h2d_bw",
                        "d2h_lat_s", "d2h_bw", "flops", "mem_bw", "handoff_s", "units",
                        "wall_s", "step_s", "lane_mac_s")
        # default devices: cpu, then every OpenCL device that opens
        d = run([xo, "probe", "--budget", "0.2", "--json"])
        assert isinstance(d, list) and d and d[0]["device"] == "cpu", d
        assert all(re.fullmatch(r"cl(:\d+:\d+)?", x["device"]) for x in d[1:]), d
        cl_ok = len(d) > 1
        for x in d:
            # the description names the backend ("cpu: ...", "cl: ...")
            kind = x["device"].split(":")[0]
            assert isinstance(x["desc"], str) and x["desc"].startswith(kind + ": "), x
            for k in probe_fields:
                assert k in x, (k, x)
            assert set(x) == {"device", "desc"} | set(probe_fields), sorted(x)
            assert isinstance(x["units"], int) and x["units"] >= 1, x
            # defined figures are positive numbers; the rest null, per device
            none = ({"enqueue_s", "sync_s", "h2d_lat_s", "h2d_bw", "d2h_lat_s", "d2h_bw",
                     "lane_mac_s"}
                    if x["device"] == "cpu" else {"handoff_s"})
            if x["device"] == "cpu" and x["units"] == 1:
                none |= {"handoff_s"}
            for k in probe_fields:
                if k in none:
                    assert x[k] is None, (k, x)
                else:
                    assert isinstance(x[k], (int, float)) and x[k] > 0, (k, x)
        # the text form names the units of each figure
        p = subprocess.run([xo, "probe", "--device", "cpu", "--budget", "0.1"],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0 and "GFLOP/s" in p.stdout and " us " in p.stdout, p.stdout
        # bad input: exit 2 before anything is measured, one line naming it
        for args, why in ((["--device", "ref"], "no probe for backend ref"),
                          (["--device", "gpu9"], "gpu9"),
                          (["--device", "cl:9:9"], "cl:9:9"),
                          (["--device", "cpu", "--budget", "0"], "--budget 0"),
                          (["--device", "cpu", "--budget", "nan"], "--budget nan"),
                          (["--device", "cpu", "--budget", "61"], "--budget 61"),
                          (["--device", "cpu", "--budget", "1s"], "--budget 1s"),
                          (["--device"], "--device"),
                          (["--frobnicate"], "--frobnicate")):
            p = subprocess.run([xo, "probe", "--json"] + args, capture_output=True, text=True,
                               timeout=300)
            err = p.stderr.strip()
            assert p.returncode == 2 and p.stdout == "", (args, p.returncode, p.stdout)
            assert "\n" not in err and why in err and err.startswith("xo probe: "), (args, err)
        # `xo perf record` stores one probe row per device it measured, none
        # with --no-probe (and none for ref, which has no probe)
        import sqlite3
        devs = ["cpu"] + (["cl"] if cl_ok else [])
        with tempfile.TemporaryDirectory() as tmp:
            db = os.path.join(tmp, "p.sqlite")
            for extra in (["--filter", "^model/seed/predict/b1/(ref|cpu|cl)$"],
                          ["--filter", "^model/seed/predict/b1/(ref|cpu)$", "--no-probe"]):
                p = subprocess.run([xo, "perf", "record", "--db", db, "--quick",
                                    "--no-progress"] + extra,
                                   capture_output=True, text=True, timeout=300)
                assert p.returncode == 0, p.stderr
            con = sqlite3.connect(db)
            rows = con.execute("SELECT run_id, device, flops, enqueue_s, units FROM probes"
                               " ORDER BY run_id, device").fetchall()
            con.close()
            assert sorted(r[1] for r in rows) == sorted(devs), rows
            assert all(r[0] == 1 and r[2] > 0 and r[4] >= 1 for r in rows), rows
            assert all((r[3] is None) == (r[1] == "cpu") for r in rows), rows
    elif what == "version":
        # not JSON: `xo --version` names the commit the source tree is at
        src = sys.argv[3]
        out = subprocess.run([xo, "--version"], capture_output=True, text=True).stdout
        g = subprocess.run(["git", "-C", src, "rev-parse", "--short=12", "HEAD"],
                           capture_output=True, text=True)
        if g.returncode == 0:
            assert f"(commit {g.stdout.strip()}" in out, (out, g.stdout)
        else:
            assert "(commit unknown" in out, out
    else:
        print(f"unknown WHAT {what}")
        return 1
    print(f"{what}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
