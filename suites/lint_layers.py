#!/usr/bin/env python3
"""lint_layers.py - the project's layering rules, checked on the sources.

usage: lint_layers.py ROOT [--acyclic DIR]... [--headers DIR]...
                          [--except-header PATH]... [--max-lines N FILE]...
       lint_layers.py --self-test

--acyclic DIR: no cycle among DIR's .c files, a file A calling (naming) a
    non-static function defined in B being the edge A -> B. A cycle is
    printed as "cycle: a.c -> b.c -> a.c (via fn, fn)".
--headers DIR: no file of DIR (.c, .h) includes a header of another folder
    ("../X/y.h"): what other folders need is declared in include/xo/.
    --except-header X/y.h lets the named ones through (internal headers whose
    move is still to come, named in the ctest registration).
--max-lines N FILE: no function of FILE over N lines (signature line to the
    closing brace, as ctags counts them).

Functions are found in the house style: a definition starts at column 0 and
its body's braces stand alone at column 0. Comments and string literals are
blanked before names are looked up. One line per finding on stdout; exit 1 on
any finding, 2 on bad usage, 0 when clean.
"""
import os
import re
import sys
import tempfile

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def strip_code(text):
    """text with comments and string/char literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * max(0, j - i - 2) + (c if j - i >= 2 else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(code):
    """[(name, first_line, last_line, static)] of the definitions in code
    (already stripped), lines 1-based."""
    lines = code.split("\n")
    found = []
    for k, line in enumerate(lines):
        if line.rstrip() != "{":
            continue
        s = k - 1
        while s > 0 and lines[s] and lines[s][0] in " \t)":
            s -= 1
        # a return type on a line of its own ("static int" above "name(")
        while s > 0 and re.match(r"[A-Za-z_][^(;{}#]*$", lines[s - 1].rstrip()):
            s -= 1
        sig = " ".join(lines[s:k])
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", sig)
        if not m or re.match(r"\s*(struct|enum|union)\b[^(]*$", sig) or "=" in sig.split("(")[0]:
            continue
        e = k + 1
        while e < len(lines) and lines[e].rstrip() != "}":
            e += 1
        name_line = s
        while name_line < k and m.group(1) not in lines[name_line]:
            name_line += 1
        found.append((m.group(1), name_line + 1, e + 1, bool(re.match(r"\s*static\b", sig))))
    return found


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def check_acyclic(root, folder):
    d = os.path.join(root, folder)
    files = sorted(f for f in os.listdir(d) if f.endswith(".c"))
    code = {f: strip_code(read(os.path.join(d, f))) for f in files}
    defined = {}
    for f in files:
        for name, _, _, static in functions(code[f]):
            if not static:
                defined[name] = f
    edges = {f: {} for f in files}
    for f in files:
        for name in set(IDENT.findall(code[f])):
            g = defined.get(name)
            if g and g != f:
                edges[f].setdefault(g, []).append(name)
    return [
        "cycle: %s (via %s)" % (" -> ".join(os.path.join(folder, x) for x in cyc),
                                ", ".join(sorted(set(via))))
        for cyc, via in cycles(edges)
    ]


def cycles(edges):
    """One cycle per strongly connected component of more than one file."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    result = []
    for comp in comps:
        # the shortest cycle through the component's first file (breadth first)
        start, prev, queue = comp[0], {}, [comp[0]]
        while queue and start not in prev:
            v = queue.pop(0)
            for w in sorted(edges[v]):
                if w in comp and w not in prev:
                    prev[w] = v
                    queue.append(w)
        path = [start]
        while len(path) == 1 or path[-1] != start:
            path.append(prev[path[-1]])
        path.reverse()
        via = [n for a, b in zip(path, path[1:]) for n in edges[a].get(b, [])]
        result.append((path, via))
    return result


def check_headers(root, folder, allowed):
    out = []
    d = os.path.join(root, folder)
    for f in sorted(os.listdir(d)):
        if not f.endswith((".c", ".h")):
            continue
        for no, line in enumerate(read(os.path.join(d, f)).split("\n"), 1):
            m = re.match(r'\s*#\s*include\s+"\.\./([^"]+)"', line)
            if m and m.group(1) not in allowed:
                out.append("%s/%s:%d: includes internal header %s (declare what is "
                           "needed in include/xo/)" % (folder, f, no, m.group(1)))
    return out


def check_lengths(root, path, limit):
    return [
        "%s:%d: %s is %d lines (limit %d)" % (path, a, name, b - a + 1, limit)
        for name, a, b, _ in functions(strip_code(read(os.path.join(root, path))))
        if b - a + 1 > limit
    ]


def run(argv):
    if not argv or argv[0].startswith("-"):
        raise ValueError("first argument: the source root")
    root, args, findings = argv[0], argv[1:], []
    acyclic, headers, allowed, lengths = [], [], set(), []
    i = 0
    while i < len(args):
        opt = args[i]
        if opt in ("--acyclic", "--headers", "--except-header") and i + 1 < len(args):
            {"--acyclic": acyclic, "--headers": headers}.get(opt, []).append(args[i + 1])
            if opt == "--except-header":
                allowed.add(args[i + 1])
            i += 2
        elif opt == "--max-lines" and i + 2 < len(args) and args[i + 1].isdigit():
            lengths.append((args[i + 2], int(args[i + 1])))
            i += 3
        else:
            raise ValueError("bad argument '%s'" % opt)
    for folder in acyclic:
        findings += check_acyclic(root, folder)
    for folder in headers:
        findings += check_headers(root, folder, allowed)
    for path, limit in lengths:
        findings += check_lengths(root, path, limit)
    return findings


def self_test():
    """Each rule finds a planted breach and passes the same tree without it."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "a"))
        os.makedirs(os.path.join(root, "b"))

        def put(path, text):
            with open(os.path.join(root, path), "w") as f:
                f.write(text)

        put("a/low.c", "int low_get(void)\n{\n\treturn 1; /* high_get() */\n}\n")
        put("a/high.c", '#include "../b/x.h"\nint high_get(void)\n{\n\treturn low_get();\n}\n'
            "static int\nlong_one(int a,\n\t int b)\n{\n" + "\tb++;\n" * 6 + "\treturn a;\n}\n")
        put("b/x.h", "")
        clean = run([root, "--acyclic", "a"])
        put("a/low.c", "int low_get(void)\n{\n\treturn high_get();\n}\n")
        cyc = run([root, "--acyclic", "a"])
        hdr = run([root, "--headers", "a"])
        hdr_ok = run([root, "--headers", "a", "--except-header", "b/x.h"])
        long_f = run([root, "--max-lines", "10", "a/high.c"])
        long_ok = run([root, "--max-lines", "11", "a/high.c"])
        checks = [
            (clean == [], "a comment naming a function is no call: %s" % clean),
            (cyc == ["cycle: a/high.c -> a/low.c -> a/high.c (via high_get, low_get)"],
             "the planted cycle: %s" % cyc),
            (len(hdr) == 1 and hdr[0].startswith("a/high.c:1: includes internal header b/x.h"),
             "the planted include: %s" % hdr),
            (hdr_ok == [], "--except-header: %s" % hdr_ok),
            (long_f == ["a/high.c:7: long_one is 11 lines (limit 10)"],
             "the planted long function: %s" % long_f),
            (long_ok == [], "at the limit: %s" % long_ok),
        ]
    bad = [why for ok, why in checks if not ok]
    for why in bad:
        print("self-test: " + why)
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    try:
        findings = run(sys.argv[1:])
    except (ValueError, OSError) as e:
        print("lint_layers: %s (usage: lint_layers.py ROOT [--acyclic DIR] [--headers DIR] "
              "[--except-header PATH] [--max-lines N FILE])" % e, file=sys.stderr)
        return 2
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
