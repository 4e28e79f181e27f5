#!/usr/bin/env python3
"""untrusted_io.py CASE XO FIXTURES WORKDIR - what xo writes and prints when
names and values come from strangers. Standard library only; each CASE is
its own ctest (suites/untrusted_io.cmake):

  tmp_symlink  saves (.keras, .weights.h5, checkpoint DIR, xo import) never
               write through a symlink planted at a name beside the target,
               including the PATH.tmp<pid> names of the old writer for the
               pid the save gets (xo is held before its exec while they are
               planted): the victim is unchanged, the target right
  spec_path    a model path with a newline, '=', spaces and '#' adds no line
               to the spec xo import writes
  import_whole a failed (killed) import leaves DIR byte-identical; a later
               one replaces it whole
  one_line     a path with control bytes or bad UTF-8 in a message: one
               stderr line, exit 2, the bytes escaped
  pg_secret    no form of a PostgreSQL password reaches stderr (a refused
               port on 127.0.0.1 gives the error path); libpq's text is
               withheld whole when it holds the password, as either the
               store's parser or libpq's own reads it
  importdb_values  perf import-db refuses the sample values perf import
               refuses (NULL, text, Inf, negative, out of range), naming the
               row, and leaves the target unchanged
"""
import os
import shutil
import struct
import subprocess
import sys
import zipfile

VICTIM = b"victim: must never change\n"


def snapshot(d):
    """Every path under d with its bytes (files) or None (dirs) and mode."""
    out = {}
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            data = open(p, "rb").read() if os.path.isfile(p) and not os.path.islink(p) else None
            out[os.path.relpath(p, d)] = (data, st.st_mode)
    return out


def npy(path, descr, shape, values):
    shape_s = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_s)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), descr[-2]), *values))


def run(xo, *args, env=None):
    return subprocess.run([xo, *args], capture_output=True, env=env)


def case_tmp_symlink(xo, fx, work):
    victim_file = os.path.join(work, "victim.bin")
    victim_dir = os.path.join(work, "victim_dir")
    os.makedirs(victim_dir)
    with open(victim_file, "wb") as f:
        f.write(VICTIM)
    with open(os.path.join(victim_dir, "keep.npy"), "wb") as f:
        f.write(VICTIM)
    n = 16
    npy(os.path.join(work, "x.npy"), "<f4", (n, 29, 1), [((i * 7919) % 1000) / 1000.0
                                                          for i in range(n * 29)])
    npy(os.path.join(work, "y.npy"), "<i4", (n,), [i % 12 for i in range(n)])
    base = ["train", "--model", os.path.join(fx, "seed.keras"), "--x",
            os.path.join(work, "x.npy"), "--y", os.path.join(work, "y.npy"), "--epochs", "1",
            "--batch-size", "8", "--device", "ref", "--seed", "3", "--save"]
    targets = ["out.keras", "out.weights.h5", "ckdir"]
    for target in targets:
        # xo is forked first and held before its exec, so its pid is known
        # before anything is planted: the old writer's names are planted for
        # that pid (exec keeps it) and the few after it, then xo is let go.
        # No pid window to miss, however many processes the machine starts.
        gate_r, gate_w = os.pipe()
        err_r, err_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(gate_w)
                os.close(err_r)
                os.read(gate_r, 1)
                os.chdir(work)
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.dup2(err_w, 2)
                os.execv(xo, [xo, *base, os.path.join(work, target)])
            finally:
                os._exit(127)
        os.close(gate_r)
        os.close(err_w)
        names = []
        for q in range(pid, pid + 64):
            names += [f"{target}.tmp{q}", f"{target}.tmp{q}.h5",
                      f".{target}.xo-ckpt-{q}", f".{target}.xo-{q}-0"]
        for n in names:
            p = os.path.join(work, n)
            if os.path.lexists(p):
                os.unlink(p)
            os.symlink(victim_dir if "xo-ckpt" in n else victim_file, p)
        os.write(gate_w, b"g")
        os.close(gate_w)
        with os.fdopen(err_r, "rb") as f:
            err = f.read()
        status = os.waitpid(pid, 0)[1]
        code = os.waitstatus_to_exitcode(status)
        for n in names:
            if os.path.lexists(os.path.join(work, n)):
                os.unlink(os.path.join(work, n))
        if open(victim_file, "rb").read() != VICTIM or \
                sorted(os.listdir(victim_dir)) != ["keep.npy"] or \
                open(os.path.join(victim_dir, "keep.npy"), "rb").read() != VICTIM:
            print(f"FAIL: {target}: a save wrote through a planted symlink")
            return 1
        if code != 0:
            print(f"FAIL: {target}: xo train exit {code}: {err.decode()!r}")
            return 1
        path = os.path.join(work, target)
        if target.endswith(".keras"):
            with zipfile.ZipFile(path) as z:
                names = sorted(z.namelist())
            if names != ["config.json", "metadata.json", "model.weights.h5"]:
                print(f"FAIL: {target}: archive holds {names}")
                return 1
        elif target.endswith(".h5"):
            if open(path, "rb").read(8) != b"\x89HDF\r\n\x1a\n":
                print(f"FAIL: {target}: not an HDF5 file")
                return 1
        elif "xo-checkpoint.txt" not in os.listdir(path):
            print(f"FAIL: {target}: no manifest")
            return 1
    # the saved .keras loads back: its weights round-trip through import
    r = run(xo, "import", os.path.join(work, "out.keras"), "--out", os.path.join(work, "back"))
    if r.returncode != 0:
        print(f"FAIL: the saved .keras does not import: {r.stderr.decode()!r}")
        return 1
    leftovers = [n for n in os.listdir(work) if ".tmp" in n or ".xo-" in n]
    if leftovers:
        print(f"FAIL: temporaries left beside the targets: {leftovers}")
        return 1
    print(f"saves ({', '.join(targets)}) wrote nothing through planted symlinks")
    return 0


def case_spec_path(xo, fx, work):
    plain = os.path.join(work, "plain.keras")
    evil = os.path.join(work, "x\ninput 3\ndense units=2 name=evil # a=b\r.keras")
    shutil.copy(os.path.join(fx, "gavg.keras"), plain)
    shutil.copy(plain, evil)
    r1 = run(xo, "import", plain, "--out", os.path.join(work, "a"))
    r2 = run(xo, "import", evil, "--out", os.path.join(work, "b"))
    if r1.returncode or r2.returncode:
        print(f"FAIL: import: {r1.stderr.decode()!r} {r2.stderr.decode()!r}")
        return 1
    a = open(os.path.join(work, "a", "model.spec"), "rb").read().split(b"\n")
    b = open(os.path.join(work, "b", "model.spec"), "rb").read().split(b"\n")
    if len(a) != len(b) or a[1:] != b[1:] or b"\r" in b[0] or not b[0].startswith(b"#"):
        print(f"FAIL: the path changed the spec: {b[:4]!r}")
        return 1
    print("a path with newline, '=', spaces and '#' stays in one comment line")
    return 0


def case_import_whole(xo, fx, work):
    out = os.path.join(work, "DIR")
    r = run(xo, "import", os.path.join(fx, "gavg.keras"), "--out", out)
    if r.returncode:
        print(f"FAIL: first import: {r.stderr.decode()!r}")
        return 1
    before = snapshot(out)
    other = os.path.join(fx, "acts.keras")
    # killed after the first weights file of the second import
    env = dict(os.environ, XO_TEST_CRASH_AFTER="1")
    r = run(xo, "import", other, "--out", out, env=env)
    if r.returncode != 86:
        print(f"FAIL: the crash hook did not fire (exit {r.returncode}): {r.stderr!r}")
        return 1
    if snapshot(out) != before:
        print("FAIL: a killed import changed DIR")
        return 1
    # a refused import (not a model) leaves it too
    bad = os.path.join(work, "bad.keras")
    with open(bad, "wb") as f:
        f.write(b"PK\x03\x04 not really an archive")
    r = run(xo, "import", bad, "--out", out)
    if r.returncode != 2 or snapshot(out) != before:
        print(f"FAIL: a refused import (exit {r.returncode}) changed DIR")
        return 1
    # a DIR holding a file import did not write is never swapped away
    with open(os.path.join(work, "mine.txt"), "w") as f:
        f.write("mine\n")
    own = os.path.join(work, "OWN")
    os.makedirs(own)
    shutil.copy(os.path.join(work, "mine.txt"), own)
    r = run(xo, "import", other, "--out", own)
    if r.returncode != 2 or os.listdir(own) != ["mine.txt"]:
        print(f"FAIL: import into a user's directory: exit {r.returncode}")
        return 1
    r = run(xo, "import", other, "--out", out)
    ref = os.path.join(work, "REF")
    r2 = run(xo, "import", other, "--out", ref)
    if r.returncode or r2.returncode:
        print(f"FAIL: import after the crash: {r.stderr.decode()!r}")
        return 1
    if {k: v[0] for k, v in snapshot(out).items()} != \
            {k: v[0] for k, v in snapshot(ref).items()}:
        print("FAIL: the second import did not replace DIR whole")
        return 1
    print(f"a killed import left DIR's {len(before)} entries as they were; the next replaced it")
    return 0


def case_one_line(xo, fx, work):
    bad = [b"a\nb.model", b"a\rb.model", b"a\x1b[31mb.model", b"a\xff\xfeb.model",
           b"a\tb\x7f.model", b"a\xc2\x9bb.model"]
    cmds = [["perf", "record", "--model"], ["import", None, "--out", "o"],
            ["predict", "--model"], ["train", "--x", "x.npy", "--y", "y.npy", "--save", "s",
                                      "--model"], [None]]
    n = 0
    for p in bad:
        for c in cmds:
            args = [os.fsencode(a) if a is not None else p for a in c]
            if c[-1] == "--model":
                args.append(p)
            r = subprocess.run([os.fsencode(xo), *args], capture_output=True, cwd=work)
            err = r.stderr
            if r.returncode != 2 or err.count(b"\n") != 1 or not err.endswith(b"\n"):
                print(f"FAIL: xo {args!r}: exit {r.returncode}, stderr {err!r}")
                return 1
            body = err[:-1]
            if any(b < 0x20 or b == 0x7f for b in body) or b"\xc2\x9b" in body:
                print(f"FAIL: xo {args!r}: raw control bytes in {err!r}")
                return 1
            try:
                body.decode("utf-8")
            except UnicodeDecodeError:
                print(f"FAIL: xo {args!r}: stderr is not UTF-8: {err!r}")
                return 1
            n += 1
    # a real model file of such a name: its stem would name benchmarks
    src = os.path.join(os.path.dirname(fx), "..", "..", "models", "seed.model")
    for p in bad[:3]:
        dst = os.path.join(os.fsencode(work), p)
        shutil.copy(src, dst)
        r = subprocess.run([os.fsencode(xo), b"perf", b"record", b"--db", b"p.sqlite",
                            b"--model", dst, b"--quick", b"--no-progress", b"--filter", b"^none$"],
                           capture_output=True, cwd=work)
        if r.returncode != 2 or r.stderr.count(b"\n") != 1 or b"control byte" not in r.stderr:
            print(f"FAIL: perf record --model {dst!r}: exit {r.returncode}, {r.stderr!r}")
            return 1
        n += 1
    print(f"{n} messages quoting bad paths: one escaped line each, exit 2")
    return 0


def case_pg_secret(xo, fx, work):
    # Every secret holds "Zq9"; none may show in any form.
    dbs = ["postgresql://u:Zq9%3Ft@127.0.0.1:1/db",
           "postgresql://u:Zq9?t@127.0.0.1:1/db",
           "postgresql://u:Zq9#t@127.0.0.1:1/db",
           "postgresql://u:Zq9@x@127.0.0.1:1/db",
           "postgresql://u:Zq9%zz@127.0.0.1:1/db",
           "postgresql://127.0.0.1:1/db?pass%77ord=Zq9a",
           "postgresql://127.0.0.1:1/db?PASSWORD=Zq9a",
           "postgresql://127.0.0.1:1/db?password=Zq9%zz",
           "postgresql://127.0.0.1:1/db?user=u&password=Zq9#frag&x=1",
           "postgresql://127.0.0.1:1/db?sslpassword=Zq9b",
           "postgresql://127.0.0.1:1/db?password=%5Aq9c",
           "host=127.0.0.1 port=1 password='Zq9 \\' x'",
           "host=127.0.0.1 port=1 password = Zq9d dbname=x",
           "dbname=postgresql://u:Zq9e@127.0.0.1:1/db",
           "dbname='postgresql://u:Zq9f@127.0.0.1:1/db'",
           "port=1 dbname=postgres://u:Zq9g@127.0.0.1:1/db",
           "POSTGRESQL://u:Zq9h@127.0.0.1:1/db"]
    for db in dbs:
        for sub in (["compare", "--db", db, "run:1"], ["import-db", "--db", "p.sqlite", db]):
            r = run(xo, "perf", *sub)
            err = r.stderr.decode("utf-8", "replace")
            if r.returncode != 2 or err.count("\n") != 1:
                print(f"FAIL: {sub!r}: exit {r.returncode}, {err!r}")
                return 1
            if "Zq9" in err or "Zq9".lower() in err.lower():
                print(f"FAIL: the password shows: {sub!r}: {err!r}")
                return 1
    # A password that libpq's own text holds ("server", the host, one
    # letter): masking it there would tell it by where the masks land, so
    # libpq's text is withheld whole; the one "***" is the --db's.
    for pw in ("server", "127.0.0.1", "p", "o"):
        db = f"postgresql://u:{pw}@127.0.0.1:1/db"
        r = run(xo, "perf", "compare", "--db", db, "run:1")
        err = r.stderr.decode("utf-8", "replace")
        if r.returncode != 2 or err.count("*") != 3 or "withheld" not in err:
            print(f"FAIL: password {pw!r}: exit {r.returncode}, {err!r}")
            return 1
    # A password holding '@': libpq's reading ends at the first '@' ("o",
    # which its text about the socket holds) and the rest spills into the
    # host, a socket directory here so no name is looked up. Only libpq's
    # own parse of the string knows that reading: withheld all the same.
    db = "postgresql://u:o@%2Fnonexistent-xo@/db"
    r = run(xo, "perf", "compare", "--db", db, "run:1")
    err = r.stderr.decode("utf-8", "replace")
    if r.returncode != 2 or err.count("\n") != 1 or "withheld" not in err:
        print(f"FAIL: password 'o' as libpq reads {db!r}: exit {r.returncode}, {err!r}")
        return 1
    # one that it does not hold: libpq's text as it is
    r = run(xo, "perf", "compare", "--db", "postgresql://u:Zq9@127.0.0.1:1/db", "run:1")
    err = r.stderr.decode("utf-8", "replace")
    if r.returncode != 2 or "withheld" in err or "127.0.0.1" not in err.split("***", 1)[1]:
        print(f"FAIL: libpq's message should show: exit {r.returncode}, {err!r}")
        return 1
    # a libpq conninfo string is a PostgreSQL store, not a SQLite path
    r = run(xo, "perf", "compare", "--db", "host=127.0.0.1 port=1 dbname=x", "run:1")
    err = r.stderr.decode("utf-8", "replace")
    if r.returncode != 2 or "cannot connect" not in err:
        print(f"FAIL: a conninfo --db was not taken for PostgreSQL: {err!r}")
        return 1
    print(f"{len(dbs)} password forms, redacted in every message; libpq's text withheld "
          "when it holds the password")
    return 0


def case_importdb_values(xo, fx, work):
    import sqlite3
    peer = os.path.join(work, "peer.json")
    with open(peer, "w") as f:
        f.write('{"results":[{"benchmark":"predict","batch":8,"samples_s":[1e-4,1.1e-4,1.2e-4]}]}')
    src = os.path.join(work, "src.sqlite")
    dst = os.path.join(work, "dst.sqlite")
    for db, name in ((src, "p"), (dst, "q")):
        r = run(xo, "perf", "import", "--db", db, "--peer", name, "--json", peer)
        if r.returncode:
            print(f"FAIL: perf import: {r.stderr.decode()!r}")
            return 1

    def dump(path):
        with sqlite3.connect(path) as c:
            return list(c.iterdump())

    before = dump(dst)
    bad = [("Inf", "9e999"), ("-Inf", "-9e999"), ("negative", "-1e-4"), ("NULL", "NULL"),
           ("text", "'fast'"), ("zero", "0"), ("a day and more", "90000")]
    for what, value in bad:
        b = os.path.join(work, "bad.sqlite")
        shutil.copy(src, b)
        with sqlite3.connect(b) as c:
            c.execute(f"UPDATE samples SET wall_s = {value} WHERE idx = 1")
        r = run(xo, "perf", "import-db", "--db", dst, b)
        err = r.stderr.decode("utf-8", "replace")
        if r.returncode != 2 or err.count("\n") != 1 or "sample 1" not in err or \
                "run " not in err:
            print(f"FAIL: import-db of a {what} sample: exit {r.returncode}, {err!r}")
            return 1
        if dump(dst) != before:
            print(f"FAIL: import-db of a {what} sample changed the target")
            return 1
    r = run(xo, "perf", "import-db", "--db", dst, src)
    if r.returncode or dump(dst) == before:
        print(f"FAIL: a valid source was not imported: {r.stderr.decode()!r}")
        return 1
    print(f"import-db refused {len(bad)} bad sample values, target unchanged; a good one lands")
    return 0


def main():
    case, xo, fx, work = sys.argv[1:5]
    work = os.path.join(work, case)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    return globals()["case_" + case](os.path.abspath(xo), os.path.abspath(fx), work)


if __name__ == "__main__":
    sys.exit(main())
