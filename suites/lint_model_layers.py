#!/usr/bin/env python3
"""lint_model_layers.py ROOT ARCHIVE | --self-test - the layering of model/.

model/ is built in layers (docs/adding-a-layer.md): the file kinds
(filekind.c) and the spec parser (spec.c) at the bottom, the runtime
(model.c, forward.c, fit.c) above them, the Keras formats (keras.c) above
the runtime, the file dispatch (modelfile.c) above both. Two rules keep it
so, and this lint checks both, naming each breach on stdout:

  1. No call cycle between the files of model/: from `nm` of ARCHIVE (the
     built libxo_model.a), a member that leaves a symbol undefined which
     another member defines calls that member; a cycle in that graph is
     printed as "cycle: a.c -> b.c -> a.c".
  2. model/'s private headers (model_internal.h, model_run.h) are included
     from model/ and suites/ only (suites may reach inside); code elsewhere
     uses include/xo/model_spec.h. Each breach is printed as FILE:LINE.

Exit 0 when clean, 1 on a breach, 2 on bad arguments or a failing nm.
--self-test runs both checks on planted input: a cycle and an outside
include must each be found, and a clean graph and tree must pass.
"""
import os
import re
import subprocess
import sys
import tempfile

PRIVATE = ("model_internal.h", "model_run.h")
SOURCE_EXT = (".c", ".h", ".inc")


def nm_members(archive):
    """{member: (defined, undefined)} of the archive's global symbols."""
    try:
        out = subprocess.run(["nm", "-A", "-g", archive], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"lint_model_layers: nm {archive}: {e}", file=sys.stderr)
        sys.exit(2)
    return parse_nm(out)


def parse_nm(text):
    """nm -A lines "archive:member.o: [addr] T name" into the member map."""
    members = {}
    for line in text.splitlines():
        m = re.match(r"^[^:]*:([^:]+\.o):\s*(?:[0-9a-fA-F]+)?\s+([A-Za-z])\s+(\S+)$", line)
        if not m:
            continue
        member, kind, name = m.group(1), m.group(2), m.group(3)
        d, u = members.setdefault(member[:-2] if member.endswith(".c.o") else member[:-2] + ".c",
                                  (set(), set()))
        (u if kind == "U" else d).add(name)
    return members


def cycles(members):
    """Every elementary cycle's first appearance as a list of files."""
    owner = {}
    for f, (d, _) in members.items():
        for s in d:
            owner[s] = f
    edges = {f: sorted({owner[s] for s in u if s in owner and owner[s] != f})
             for f, (_, u) in members.items()}
    found, seen = [], set()
    state = {}

    def visit(f, path):
        state[f] = 1
        path.append(f)
        for g in edges.get(f, []):
            if state.get(g) == 1:
                cyc = path[path.index(g):] + [g]
                key = frozenset(cyc)
                if key not in seen:
                    seen.add(key)
                    found.append(cyc)
            elif not state.get(g):
                visit(g, path)
        path.pop()
        state[f] = 2

    for f in sorted(edges):
        if not state.get(f):
            visit(f, [])
    return found


def outside_includes(root):
    """FILE:LINE of each include of a private model/ header outside model/ and suites/."""
    hits = []
    for top, dirs, files in os.walk(root):
        rel_top = os.path.relpath(top, root)
        dirs[:] = [d for d in dirs if not d.startswith(("build", ".git", "_deps", ".venv"))]
        first = rel_top.split(os.sep)[0]
        if first in ("model", "suites"):
            continue
        for name in sorted(files):
            if not name.endswith(SOURCE_EXT):
                continue
            path = os.path.join(top, name)
            with open(path, encoding="utf-8", errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
                    if m and os.path.basename(m.group(1)) in PRIVATE:
                        hits.append(f"{os.path.relpath(path, root)}:{n}")
    return hits


def check(root, members):
    bad = 0
    for cyc in cycles(members):
        print("cycle: " + " -> ".join(cyc))
        bad = 1
    for hit in outside_includes(root):
        print(f"{hit}: includes a private model/ header (use xo/model_spec.h)")
        bad = 1
    return bad


def self_test():
    clean = {"low": ({"xo_low"}, set()), "mid": ({"xo_mid"}, {"xo_low", "printf"}),
             "top": ({"xo_top"}, {"xo_mid", "xo_low"})}
    cyclic = dict(clean, low=({"xo_low"}, {"xo_top"}))
    nm_text = ("lib.a:low.o:0000000000000000 T xo_low\n"
               "lib.a:mid.o:                 U xo_low\n"
               "lib.a:mid.o:0000000000000010 T xo_mid\n")
    parsed = parse_nm(nm_text)
    ok = parsed == {"low.c": ({"xo_low"}, set()), "mid.c": ({"xo_mid"}, {"xo_low"})}
    ok &= cycles(clean) == []
    # low -> top -> low and low -> top -> mid -> low
    ok &= sorted(len(c) for c in cycles(cyclic)) == [3, 4]
    with tempfile.TemporaryDirectory() as t:
        for d in ("model", "suites", "cli", "build"):
            os.makedirs(os.path.join(t, d))
        for d in ("model", "suites", "build"):
            with open(os.path.join(t, d, "a.c"), "w") as fh:
                fh.write('#include "model_internal.h"\n')
        with open(os.path.join(t, "cli", "b.c"), "w") as fh:
            fh.write('#include "xo.h"\n#include "xo/model_spec.h"\n')
        ok &= outside_includes(t) == []
        with open(os.path.join(t, "cli", "b.c"), "a") as fh:
            fh.write('#include "../model/model_run.h"\n')
        ok &= outside_includes(t) == ["cli/b.c:3"]
    print("lint_model_layers self-test: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 3 or not os.path.isdir(argv[1]) or not os.path.isfile(argv[2]):
        print("usage: lint_model_layers.py ROOT ARCHIVE | --self-test", file=sys.stderr)
        return 2
    return check(argv[1], nm_members(argv[2]))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
