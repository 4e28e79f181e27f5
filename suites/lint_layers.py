#!/usr/bin/env python3
"""lint_layers.py - the project's layering rules, checked on the whole tree.

usage: lint_layers.py ROOT
       lint_layers.py --self-test

The folders and the exceptions are listed once, below (PRODUCT, TESTS,
ALLOWED_CYCLES, SHARED_HEADERS); the rules are:

1. No file cycle in a product folder: file A -> B when A names (calls or
   takes the address of) a non-static function, or reads a table, that B
   defines. A strongly
   connected set of files is printed as its shortest cycle, "cycle: a.c ->
   b.c -> a.c (via fn, ...)", then the set's other files, unless the set
   lies inside one of ALLOWED_CYCLES (a driver table, whose generic half
   and engines must know each other).
2. No header of another folder: a file (.c, .h, .inc) of a product or test
   folder that includes a header living in another folder (by "../X/y.h" or
   by a name found there through an include path) is printed as FILE:LINE,
   unless SHARED_HEADERS lets that folder through, with the reason. What
   another folder needs is declared under include/xo/. An exception no file
   uses any more is a finding too, so the list only shrinks.
3. No function over MAX_LINES lines (signature line to closing brace) in any
   folder but kernels/, the suites and fuzzers included; kernels/ keeps its
   long tiled loops, whose contract is their comment.

Functions are found in the house style: a definition starts at column 0 and
its body's braces stand alone at column 0. Comments and string literals are
blanked before names are looked up. One line per finding on stdout; exit 1 on
any finding, 2 on bad usage, 0 when clean. --self-test plants each kind of
finding in a scratch tree and fails if one is missed or a clean tree is
flagged.
"""
import os
import re
import sys
import tempfile

MAX_LINES = 150
# Folders of the product, bottom-up; each is checked for cycles, headers and
# (kernels/ aside) function length.
PRODUCT = ("include", "core", "reference", "kernels", "cl", "model", "perfdb", "cli")
# Folders of tests and fuzzers: headers and function length, no cycle rule
# (a suite's helpers may call back into the suite's table).
TESTS = ("suites", "fuzz")
NO_LENGTH_LIMIT = ("kernels",)
# Cycles allowed, each a set of files with the reason.
ALLOWED_CYCLES = (
    ({"perfdb/sql.c", "perfdb/sql_pg.c", "perfdb/sql_sqlite.c"},
     "the SQL driver table: sql.c dispatches to the engines and the engines "
     "report errors and quote through sql.c"),
)
# Headers of one folder that others may include: header -> (folders, reason).
SHARED_HEADERS = {
    "perfdb/perfdb.h": (("cli", "suites", "fuzz"),
                        "perfdb's library interface (xo_perfdb exports its folder as a "
                        "PUBLIC include path); to move to include/xo/"),
    "perfdb/sql.h": (("cli", "suites"), "the store's SQL layer, as perfdb.h"),
    "perfdb/proc.h": (("cli", "suites"), "the child-process helpers, as perfdb.h"),
    "perfdb/jsonout.h": (("cli",), "the JSON writer, as perfdb.h"),
    "perfdb/explain.h": (("cli", "suites"), "the explain model, as perfdb.h"),
    "perfdb/cost.h": (("suites",), "white-box tests of the cost model"),
    "perfdb/split.h": (("suites",), "white-box tests of the time split"),
    "perfdb/verdict.h": (("suites",), "white-box tests of the verdict rules"),
    "suites/harness.h": (("cli", "fuzz"),
                         "the case harness (library xo_harness) that xo check and the "
                         "case fuzzer run; to move to include/xo/"),
    "kernels/cpu.h": (("suites",), "white-box tests of the cpu kernels and their gates"),
    "cl/cl_internal.h": (("suites",), "white-box tests of the cl runtime and its choices"),
    "cl/cl_probe.h": (("suites",), "the probe kernels checked against the host computing the "
                      "same"),
    "model/model_internal.h": (("suites",), "white-box tests of the layer table and parsers"),
    "reference/ref_internal.h": (("suites",), "the gradient check calls the reference's "
                                 "per-op helpers directly"),
}
SOURCE_EXT = (".c", ".h", ".inc")

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# a file-scope variable with external linkage (a table others read), at column 0
GLOBAL_VAR = re.compile(r"^(?!static\b|extern\b|typedef\b|enum\b|union\b|struct\s+\w+\s*\{)"
                        r"[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]\n]*\]\s*)*(?:=|;)",
                        re.M)


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


def sources(root, folder, ext=SOURCE_EXT):
    """Paths (relative to root, sorted) of folder's files ending in ext."""
    out = []
    for top, dirs, files in os.walk(os.path.join(root, folder)):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build")))
        out += [os.path.relpath(os.path.join(top, f), root) for f in files if f.endswith(ext)]
    return sorted(out)


def allowed_cycle(comp):
    return any(comp <= files for files, _ in ALLOWED_CYCLES)


def check_acyclic(root, folder):
    files = [p for p in sources(root, folder, (".c",))]
    code = {f: strip_code(read(os.path.join(root, f))) for f in files}
    defined = {}
    for f in files:
        for name, _, _, static in functions(code[f]):
            if not static:
                defined[name] = f
        for m in GLOBAL_VAR.finditer(code[f]):
            if "(" not in code[f][m.start():m.end()]:
                defined[m.group(1)] = f
    edges = {f: {} for f in files}
    for f in files:
        for name in set(IDENT.findall(code[f])):
            g = defined.get(name)
            if g and g != f:
                edges[f].setdefault(g, []).append(name)
    return [
        "cycle: %s (via %s)%s" % (
            " -> ".join(cyc), ", ".join(sorted(set(via))),
            "; with it in one cycle set: " + ", ".join(c for c in comp if c not in cyc)
            if len(comp) + 1 > len(cyc) else "")
        for comp, cyc, via in cycles(edges) if not allowed_cycle(set(comp))
    ]


def cycles(edges):
    """(component, shortest cycle, names) per strongly connected component
    of more than one file."""
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
        result.append((comp, path, via))
    return result


def header_owners(root, folders):
    """{basename: path} of the headers in folders (include/ aside: its
    headers are included by their path under include/)."""
    owners = {}
    for folder in folders:
        if folder == "include":
            continue
        for p in sources(root, folder, (".h", ".inc")):
            owners.setdefault(os.path.basename(p), p)
    return owners


def resolve(root, path, inc, owners):
    """The tree path an include names: next to the includer, under include/,
    or (found through an include path) the folder header of that name."""
    near = os.path.normpath(os.path.join(os.path.dirname(path), inc))
    if os.path.exists(os.path.join(root, near)):
        return near
    if os.path.exists(os.path.join(root, "include", inc)):
        return os.path.join("include", inc)
    return owners.get(os.path.basename(inc))


def check_headers(root, folder, owners, shared, used):
    """Includes of another folder's header not let through by shared; each
    (header, folder) let through is added to used."""
    out = []
    for path in sources(root, folder):
        for no, line in enumerate(read(os.path.join(root, path)).split("\n"), 1):
            m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
            if not m:
                continue
            target = resolve(root, path, m.group(1), owners)
            if not target or target.startswith("..") or target.split(os.sep)[0] in (
                    folder, "include"):
                continue
            if folder in shared.get(target, ((), ""))[0]:
                used.add((target, folder))
                continue
            out.append("%s:%d: includes %s, a header of another folder (declare what is "
                       "needed in include/xo/)" % (path, no, target))
    return out


def check_lengths(root, folder):
    return [
        "%s:%d: %s is %d lines (limit %d)" % (path, a, name, b - a + 1, MAX_LINES)
        for path in sources(root, folder)
        for name, a, b, _ in functions(strip_code(read(os.path.join(root, path))))
        if b - a + 1 > MAX_LINES
    ]


def run(root, shared=None):
    shared = SHARED_HEADERS if shared is None else shared
    findings, used = [], set()
    present = [f for f in PRODUCT + TESTS if os.path.isdir(os.path.join(root, f))]
    if not any(f in present for f in PRODUCT):
        raise ValueError("%s holds none of the folders %s" % (root, ", ".join(PRODUCT)))
    owners = header_owners(root, present)
    for folder in present:
        if folder in PRODUCT:
            findings += check_acyclic(root, folder)
        findings += check_headers(root, folder, owners, shared, used)
        if folder not in NO_LENGTH_LIMIT:
            findings += check_lengths(root, folder)
    # an exception nothing needs any more goes, so the list only shrinks
    findings += [
        "lint_layers.py: SHARED_HEADERS lets %s include %s, which none of its files "
        "does: drop it" % (folder, header)
        for header, (folders, _) in sorted(shared.items()) for folder in folders
        if folder in present and (header, folder) not in used
    ]
    return findings


def self_test():
    """Each rule finds its planted breach and passes the tree without it."""
    with tempfile.TemporaryDirectory() as root:
        for d in ("core", "perfdb", "suites", "kernels", "cli", "include/xo"):
            os.makedirs(os.path.join(root, d))

        def put(path, text):
            with open(os.path.join(root, path), "w") as f:
                f.write(text)

        def fn(name, body, static=""):
            return "%sint\n%s(void)\n{\n%s}\n" % (static, name, body)

        def lines(n):  # the body of an n-line function (name line to brace)
            return "\tx++;\n" * (n - 3)

        put("core/low.c", fn("low_get", "\treturn 1; /* high_get() */\n"))
        put("core/high.c", '#include "xo/api.h"\n' + fn("high_get", "\treturn low_get();\n"))
        put("include/xo/api.h", "")
        put("core/core_internal.h", "")
        sql = fn("sql_run", "\treturn sql_pg_run();\n") + fn("sql_error", "\treturn 2;\n")
        put("perfdb/sql.c", sql)
        put("perfdb/sql_pg.c", fn("sql_pg_run", "\treturn sql_error();\n"))
        put("suites/test_a.c", fn("at_limit", lines(MAX_LINES)))
        put("kernels/tile.c", fn("tile_loop", lines(2 * MAX_LINES)))
        put("kernels/cpu.h", "")
        put("suites/test_k.c", '#include "../kernels/cpu.h"\n')  # shared, below
        put("cli/table.c", "const int kinds_table[2] = {0, 1};\n"
            + fn("kinds_get", "\treturn 0;\n"))
        put("cli/use.c", fn("use_get", "\treturn kinds_table[1];\n"))
        shared = {"kernels/cpu.h": (("suites",), "white-box tests")}
        clean = run(root, shared)
        put("core/low.c", fn("low_get", "\treturn high_get();\n"))
        put("perfdb/sql.c", '#include "core_internal.h"\n' + sql
            + fn("big", lines(MAX_LINES + 1), "static "))
        put("suites/test_a.c", fn("at_limit", lines(MAX_LINES + 1)))
        put("suites/test_b.c", '#include "../core/core_internal.h"\n')
        put("cli/table.c", "const int kinds_table[2] = {0, 1};\n" + fn("kinds_get",
                                                                       "\treturn use_get();\n"))
        shared["core/gone.h"] = (("cli", "fuzz"), "moved since")
        found = run(root, shared)
        want = [
            "cycle: cli/table.c -> cli/use.c -> cli/table.c (via kinds_table, use_get)",
            "lint_layers.py: SHARED_HEADERS lets cli include core/gone.h, which none of its "
            "files does: drop it",
            "cycle: core/high.c -> core/low.c -> core/high.c (via high_get, low_get)",
            "perfdb/sql.c:1: includes core/core_internal.h, a header of another folder "
            "(declare what is needed in include/xo/)",
            "perfdb/sql.c:13: big is %d lines (limit %d)" % (MAX_LINES + 1, MAX_LINES),
            "suites/test_a.c:2: at_limit is %d lines (limit %d)" % (MAX_LINES + 1, MAX_LINES),
            "suites/test_b.c:1: includes core/core_internal.h, a header of another folder "
            "(declare what is needed in include/xo/)",
        ]
        checks = [(clean == [], "a clean tree (a comment naming a function, the SQL "
                   "driver cycle, a function at the limit, a long kernel, a shared "
                   "header) was flagged: %s"
                   % clean)]
        checks += [(w in found, "missed: %s (found %s)" % (w, found)) for w in want]
        checks += [(len(found) == len(want), "more found than planted: %s" % found)]
    bad = [why for ok, why in checks if not ok]
    for why in bad:
        print("self-test: " + why)
    print("self-test: " + ("FAILED" if bad else "ok"))
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("lint_layers: usage: lint_layers.py ROOT | --self-test", file=sys.stderr)
        return 2
    try:
        findings = run(sys.argv[1])
    except (ValueError, OSError) as e:
        print("lint_layers: %s" % e, file=sys.stderr)
        return 2
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
