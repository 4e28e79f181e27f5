#!/usr/bin/env python3
"""ci/reach.py - the reach map's symbolizer and query (ci/reach.sh,
docs/mutation.md "Selection by reach").

  reach.py build --map DIR --src DIR
      turns the function addresses ci/reach_rt.c wrote under DIR/pcs/PASS/TEST
      into DIR/reach.tsv (PASS TEST FILE FUNCTION) and every product function
      the map's binaries define into DIR/funcs.tsv (FILE FUNCTION), FILE
      relative to the source tree; writes DIR/done last: the tree's key
      (--key) and the tables' row counts.
  reach.py check --map DIR --key KEY
      exit 0 when DIR is a whole map of the tree KEY: its `done` names KEY
      and the row counts its tables still have; else one line, exit 2.
  reach.py select --map DIR
      reads "MUTANT<TAB>FILE<TAB>FUNCTION" lines on stdin and prints, per
      mutant, either "MUTANT<TAB>area<TAB>REASON" (the map cannot tell: the
      mutant's tests are its area's), "MUTANT<TAB>none<TAB>-<TAB>-" (no test
      reaches the function) or one "MUTANT<TAB>test<TAB>PASS<TAB>TEST<TAB>SECONDS"
      line per test of a pass that reaches the function, cheapest first;
      for an OpenCL kernel (a .cl file) whose launcher, the function of its
      name in cl/*.c, tests reach, those tests as "confirm" lines of the
      same form (the runner sends one that lives to its area). A test that
      failed or timed out while the map was made is selected for every
      mutant the map is asked about (its record may be cut short).
Exit: 0 done; 2 bad usage or a map that is not complete.
"""

import os
import subprocess
import sys
from collections import defaultdict

PRODUCT_DIRS = ("core", "kernels", "reference", "cl", "model", "perfdb", "cli", "include")


def die(msg):
    sys.stderr.write("xo: reach: %s\n" % msg)
    sys.exit(2)


def product(path, src):
    """FILE relative to src when it is product code, else None."""
    if not path or not path.startswith("/"):
        return None
    rel = os.path.relpath(os.path.normpath(path), src)
    if rel.startswith("..") or rel.split("/", 1)[0] not in PRODUCT_DIRS:
        return None
    return rel


def symbolize(module, addrs, src):
    """{address: [(file, function), ...]} for the product frames of each."""
    addrs = sorted(addrs)
    if not addrs or not os.path.isfile(module):
        return {}
    out = subprocess.run(["llvm-symbolizer", "--obj=" + module, "--functions=linkage",
                          "--inlining"], input="".join("0x%x\n" % a for a in addrs),
                         capture_output=True, text=True, check=False).stdout
    res = {}
    blocks = out.split("\n\n")
    for a, block in zip(addrs, blocks):
        lines = block.strip("\n").split("\n")
        frames = []
        for k in range(0, len(lines) - 1, 2):
            fn, loc = lines[k], lines[k + 1]
            f = product(loc.rsplit(":", 2)[0], src)
            if f and fn and fn != "??":
                frames.append((f, fn))
        res[a] = frames
    return res


def defined(module):
    """Addresses of the function symbols a binary defines."""
    out = subprocess.run(["llvm-nm", "--defined-only", module], capture_output=True,
                         text=True, check=False).stdout
    res = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in ("t", "T", "W", "w"):
            res.add(int(parts[0], 16))
    return res


def build(mapdir, src):
    src = os.path.realpath(src)
    pcs = os.path.join(mapdir, "pcs")
    per_test = defaultdict(set)
    per_module = defaultdict(set)
    for pss in sorted(os.listdir(pcs)):
        for test in sorted(os.listdir(os.path.join(pcs, pss))):
            d = os.path.join(pcs, pss, test)
            if not os.path.isdir(d):
                continue
            for name in os.listdir(d):
                with open(os.path.join(d, name), encoding="utf-8", errors="replace") as f:
                    for line in f:
                        mod, _, off = line.rstrip("\n").rpartition(" ")
                        try:
                            a = int(off, 16)
                        except ValueError:
                            continue
                        per_test[(pss, test)].add((mod, a))
                        per_module[mod].add(a)
    if not per_test:
        # every test of a pass enters some product function (main's callees
        # at least): an empty record means the runtime wrote nothing, or its
        # files went away, and a map of it would place no mutant
        die("no test recorded a function under %s: not a map" % pcs)
    funcs = set()
    where = {}
    for mod, addrs in per_module.items():
        syms = defined(mod)
        table = symbolize(mod, addrs | syms, src)
        for a in syms:
            funcs.update(table.get(a, []))
        for a in addrs:
            where[(mod, a)] = table.get(a, [])
            funcs.update(where[(mod, a)])
    with open(os.path.join(mapdir, "reach.tsv"), "w", encoding="utf-8") as f:
        for (pss, test), sites in sorted(per_test.items()):
            seen = set()
            for s in sites:
                seen.update(where.get(s, []))
            for fl, fn in sorted(seen):
                f.write("%s\t%s\t%s\t%s\n" % (pss, test, fl, fn))
    with open(os.path.join(mapdir, "funcs.tsv"), "w", encoding="utf-8") as f:
        for fl, fn in sorted(funcs):
            f.write("%s\t%s\n" % (fl, fn))
    print("reach: %d tests, %d product functions, %d reached" %
          (len(per_test), len(funcs), len({x for v in where.values() for x in v})))


def select(mapdir):
    need = ("tests.tsv", "reach.tsv", "funcs.tsv", "done")
    if not all(os.path.isfile(os.path.join(mapdir, n)) for n in need):
        die("%s: not a complete reach map" % mapdir)
    secs, failed = {}, []
    with open(os.path.join(mapdir, "tests.tsv"), encoding="utf-8") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) == 4:
                secs[(p[0], p[1])] = float(p[2])
                if p[3] != "ok":
                    failed.append((p[0], p[1]))
    # passes ci/reach.sh was not asked to map (the races label: Oclgrind
    # takes minutes a test; an ISA pass when time is short): OpenCL host
    # code is what the races are for, the cpu kernels what the ISA passes
    # are for (they run the quick pass's tests again with another kernel
    # level, so elsewhere they reach what the quick pass's rows say). A map
    # without its `unmapped` file says nothing of them: a pass is taken as
    # mapped only when tests.tsv has a row of it.
    if os.path.isfile(os.path.join(mapdir, "unmapped")):
        with open(os.path.join(mapdir, "unmapped"), encoding="utf-8") as f:
            unmapped = " ".join(f.read().split())
    else:
        mapped = {pss for pss, _ in secs}
        unmapped = " ".join(u for u, there in (
            ("races", "races" in mapped),
            ("isa-", any(m.startswith("isa-") for m in mapped))) if not there)
    funcs = set()
    with open(os.path.join(mapdir, "funcs.tsv"), encoding="utf-8") as f:
        for line in f:
            funcs.add(tuple(line.rstrip("\n").split("\t")))
    asked = []
    for line in sys.stdin:
        p = line.rstrip("\n").split("\t")
        if len(p) == 3:
            asked.append(p)
    # OpenCL kernel code runs on the device, where the map cannot see it;
    # the host function of the kernel's own name (xo_cl_relu6_fwd in
    # cl/cl_ops.c for the kernel xo_cl_relu6_fwd) is what enqueues it, so
    # the tests that reach that function are the ones that can run it. A
    # mutant selected so is `confirm`: living through them is not enough,
    # it runs its area before it is called a survivor (a test that reaches
    # the launcher need not take the kernel's branch, and the races pass
    # is not mapped).
    launcher = {}
    for _, fl, fn in asked:
        if fl.endswith(".cl"):
            host = sorted(h for h in funcs
                          if h[1] == fn and h[0].startswith("cl/") and h[0].endswith(".c"))
            if host:
                launcher[(fl, fn)] = host
    want = {(fl, fn) for _, fl, fn in asked} | {h for v in launcher.values() for h in v}
    hits = defaultdict(set)
    with open(os.path.join(mapdir, "reach.tsv"), encoding="utf-8") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) == 4 and (p[2], p[3]) in want:
                hits[(p[2], p[3])].add((p[0], p[1]))
    for mid, fl, fn in asked:
        if fl.endswith(".cl") and (fl, fn) in launcher:
            sel = set().union(*(hits[h] for h in launcher[(fl, fn)]))
            if not sel:
                print("%s\tarea\tOpenCL kernel code: no test reaches its launcher" % mid)
                continue
            for pss, test in sorted(sel, key=lambda x: (secs.get(x, 0.0), x)):
                print("%s\tconfirm\t%s\t%s\t%.2f" % (mid, pss, test, secs.get((pss, test), 0.0)))
        elif fl.endswith(".cl"):
            print("%s\tarea\tOpenCL kernel code: the map cannot see it" % mid)
        elif fl.startswith("cl/") and "races" in unmapped.split():
            print("%s\tarea\tOpenCL host code: the races pass is not in the map" % mid)
        elif fl.startswith("kernels/") and any(u.startswith("isa-") for u in unmapped.split()):
            print("%s\tarea\tcpu kernels: an ISA pass is not in the map" % mid)
        elif fn == "-":
            print("%s\tarea\toutside any function" % mid)
        elif (fl, fn) not in funcs:
            print("%s\tarea\t%s of %s is not in the map" % (mid, fn, fl))
        else:
            sel = hits[(fl, fn)] | set(failed)
            if not sel:
                print("%s\tnone\t-\t-" % mid)
                continue
            for pss, test in sorted(sel, key=lambda x: (secs.get(x, 0.0), x)):
                print("%s\ttest\t%s\t%s\t%.2f" % (mid, pss, test, secs.get((pss, test), 0.0)))


def counts(mapdir):
    """The line that `done` holds after the key: the tables' row counts."""
    n = []
    for name in ("tests.tsv", "reach.tsv", "funcs.tsv"):
        with open(os.path.join(mapdir, name), "rb") as f:
            n.append("%s %d" % (name, sum(1 for _ in f)))
    return " ".join(n)


def check(mapdir, key):
    """A map is whole and of the tree KEY: `done` (written last) names KEY
    and the row counts the tables had then; a map of another tree, cut short
    or changed since is refused."""
    try:
        with open(os.path.join(mapdir, "done"), encoding="utf-8", errors="replace") as f:
            done = f.read().split("\n")
        now = counts(mapdir)
    except OSError:
        die("%s: not a complete reach map" % mapdir)
    if done[0] != key:
        die("%s: a map of another tree (key %s, not %s)" % (mapdir, done[0][:40], key))
    if len(done) < 2 or done[1] != now:
        die("%s: a truncated or inconsistent map (%s, done says %s)" %
            (mapdir, now, done[1][:120] if len(done) > 1 else "nothing"))


def main():
    args = sys.argv[1:]
    if not args or args[0] not in ("build", "select", "check"):
        die("usage: reach.py build --map DIR --src DIR [--key K] | select --map DIR"
            " | check --map DIR --key K")
    opts = dict(zip(args[1::2], args[2::2]))
    mapdir = opts.get("--map") or die("--map is needed")
    if args[0] == "build":
        build(mapdir, opts.get("--src") or die("--src is needed"))
        with open(os.path.join(mapdir, "done"), "w", encoding="utf-8") as f:
            f.write("%s\n%s\n" % (opts.get("--key", "-"), counts(mapdir)))
    elif args[0] == "check":
        check(mapdir, opts.get("--key") or die("--key is needed"))
    else:
        select(mapdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
