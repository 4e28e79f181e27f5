#!/usr/bin/env python3
"""lint_perfdb_shape.py SRC | --self-test - the shape perfdb keeps as it grows.

1. No function in perfdb/*.c or cli/perf.c runs over 150 lines (from the
   line of its name to its closing brace): a long function there has been a
   command's whole job in one body (record, compare, the report page).
2. No cycle between perfdb's files but the SQL driver table: file A depends
   on file B when A calls a function B defines (external linkage); the only
   strongly connected set allowed is sql.c with its engines sql_pg.c and
   sql_sqlite.c. A cycle means a decision and its inputs live in two places
   (verdict.c calling back into the command that called it).

3. Reads of the store are the query module's: a string that names SELECT
   may stand in query.c and query_rows.c, in the writer and its migrations
   (store.c), the store copier (importdb.c), the SQL drivers, and in the
   modules that own their table (order.c: the commit graph; modelid.c: the
   model claims). READS_LEFT is what other files may hold, at most:
   detect.c's one is a write (forgetting a series' fit when its change is
   marked) whose WHERE names a subquery. A new read goes to the query module.

Each finding is one line FILE:LINE: what; exit 1 when there is one, 0 when
there is none, 2 on bad usage. --self-test plants a long function and a
cycle in a scratch tree and expects both found, and a clean tree passes.
"""
import os
import re
import sys
import tempfile

MAX_LINES = 150
ALLOWED_CYCLE = {"sql.c", "sql_pg.c", "sql_sqlite.c"}
READS_OWNED = {"query.c", "query_rows.c", "store.c", "importdb.c", "sql.c", "sql_pg.c",
               "sql_sqlite.c", "order.c", "modelid.c"}
READS_LEFT = {"detect.c": 1}
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined"}


def selects(text):
    """String literals in text (comments dropped) that name SELECT."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return len(re.findall(r'"[^"\n]*\bSELECT\b', text))


def strip(text):
    """Comments, strings and character literals blanked, line breaks kept."""
    pat = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
    return pat.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def functions(text):
    """(name, first line, last line, is_static) of each top-level function."""
    out = []
    depth = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "{":
            if depth == 0:
                head = text[max(0, text.rfind(";", 0, i), text.rfind("}", 0, i)) + 1:i]
                m = re.search(r"\b([A-Za-z_]\w*)\s*\([^;]*\)\s*$", head, re.S)
                if m and m.group(1) not in KEYWORDS and "=" not in head[: m.start()]:
                    start = text.count("\n", 0, i - len(head) + m.start(1)) + 1
                    j, d = i, 0
                    while j < n:
                        if text[j] == "{":
                            d += 1
                        elif text[j] == "}":
                            d -= 1
                            if d == 0:
                                break
                        j += 1
                    end = text.count("\n", 0, j) + 1
                    static = re.search(r"(^|\s)static\s", head[: m.start()]) is not None
                    out.append((m.group(1), start, end, static))
                    i = j + 1
                    continue
            depth += 1
        elif c == "}":
            depth -= 1
        i += 1
    return out


def sccs(graph):
    """Tarjan's strongly connected components of {node: set(nodes)}."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check(src):
    findings = []
    perfdb = os.path.join(src, "perfdb")
    files = sorted(f for f in os.listdir(perfdb) if f.endswith(".c"))
    texts = {}
    for f in files:
        with open(os.path.join(perfdb, f), encoding="utf-8", errors="replace") as fh:
            raw = fh.read()
        texts[f] = strip(raw)
        n = selects(raw)
        if f not in READS_OWNED and n > READS_LEFT.get(f, 0):
            findings.append("perfdb/%s: %d SELECT strings, at most %d: reads go to the query module"
                            % (f, n, READS_LEFT.get(f, 0)))
    long_in = [(os.path.join("perfdb", f), texts[f]) for f in files]
    cli = os.path.join(src, "cli", "perf.c")
    if os.path.exists(cli):
        with open(cli, encoding="utf-8", errors="replace") as fh:
            long_in.append((os.path.join("cli", "perf.c"), strip(fh.read())))
    defined = {}
    for path, text in long_in:
        for name, start, end, static in functions(text):
            if end - start + 1 > MAX_LINES:
                findings.append("%s:%d: %s is %d lines (at most %d)"
                                % (path, start, name, end - start + 1, MAX_LINES))
            if not static and path.startswith("perfdb"):
                defined.setdefault(name, os.path.basename(path))
    graph = {f: set() for f in files}
    for f in files:
        own = {name for name, _, _, _ in functions(texts[f])}
        for call in set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", texts[f])):
            g = defined.get(call)
            if g and g != f and call not in own:
                graph[f].add(g)
    for comp in sccs(graph):
        if len(comp) > 1 and not comp <= ALLOWED_CYCLE:
            findings.append("perfdb: file cycle %s" % " <-> ".join(sorted(comp)))
    return findings


def self_test():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "perfdb"))
        os.makedirs(os.path.join(d, "cli"))

        def put(name, body):
            with open(os.path.join(d, name), "w") as fh:
                fh.write(body)

        put("perfdb/sql.c", "int xo_sql_a(void)\n{\n\treturn xo_sql_pg(); /* } */\n}\n")
        put("perfdb/sql_pg.c", "int xo_sql_pg(void)\n{\n\treturn xo_sql_a();\n}\n")
        put("perfdb/a.c", "int a_f(void)\n{\n\treturn 1;\n}\n")
        put("perfdb/query.c", "const char *q = \"SELECT 1\"; /* SELECT in a comment */\n")
        put("cli/perf.c", "static const char *s = \"{\";\nint m(void)\n{\n\treturn 0;\n}\n")
        if check(d):
            print("self-test: a clean tree was flagged: %s" % check(d))
            return 1
        put("perfdb/b.c", "int b_f(void)\n{\n\treturn a_f();\n}\n")
        put("perfdb/a.c", "int a_f(void)\n{\n\treturn b_f();\n}\n")
        put("cli/perf.c", "int m(void)\n{\n" + "\tm();\n" * MAX_LINES + "}\n")
        put("perfdb/c.c", "const char *q = \"SELECT 1\";\n")
        found = check(d)
        if (not any("a.c <-> b.c" in f for f in found)
                or not any("cli/perf.c:1: m is" in f for f in found)
                or not any("perfdb/c.c: 1 SELECT" in f for f in found)):
            print("self-test: planted cycle or long function not found: %s" % found)
            return 1
    print("self-test: ok")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2 or not os.path.isdir(os.path.join(argv[1], "perfdb")):
        sys.stderr.write("usage: lint_perfdb_shape.py SOURCE_DIR | --self-test\n")
        return 2
    findings = check(argv[1])
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
