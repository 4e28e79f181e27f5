#!/usr/bin/env python3
"""lint_perfdb_shape.py SRC | --self-test - the shape perfdb keeps as it grows.

(File cycles and function length are suites/lint_layers.py's, for every
folder.)

Reads of the store are the query module's: a string that names SELECT
may stand in query.c and query_rows.c, in the writer and its migrations
(store.c), the store copier (importdb.c), the SQL drivers, and in the
modules that own their table (order.c: the commit graph; modelid.c: the
model claims). READS_LEFT is what other files may hold, at most:
detect.c's one is a write (forgetting a series' fit when its change is
marked) whose WHERE names a subquery. A new read goes to the query module.

Each finding is one line FILE:LINE: what; exit 1 when there is one, 0 when
there is none, 2 on bad usage. --self-test plants a read outside query.c in
a scratch tree and expects it found, and a clean tree passes.
"""
import os
import re
import sys
import tempfile

READS_OWNED = {"query.c", "query_rows.c", "store.c", "importdb.c", "sql.c", "sql_pg.c",
               "sql_sqlite.c", "order.c", "modelid.c"}
READS_LEFT = {"detect.c": 1}


def selects(text):
    """String literals in text (comments dropped) that name SELECT."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return len(re.findall(r'"[^"\n]*\bSELECT\b', text))


def check(src):
    findings = []
    perfdb = os.path.join(src, "perfdb")
    files = sorted(f for f in os.listdir(perfdb) if f.endswith(".c"))
    for f in files:
        with open(os.path.join(perfdb, f), encoding="utf-8", errors="replace") as fh:
            raw = fh.read()
        n = selects(raw)
        if f not in READS_OWNED and n > READS_LEFT.get(f, 0):
            findings.append("perfdb/%s: %d SELECT strings, at most %d: reads go to the query module"
                            % (f, n, READS_LEFT.get(f, 0)))
    return findings


def self_test():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "perfdb"))
        os.makedirs(os.path.join(d, "cli"))

        def put(name, body):
            with open(os.path.join(d, name), "w") as fh:
                fh.write(body)

        put("perfdb/a.c", "int a_f(void)\n{\n\treturn 1;\n}\n")
        put("perfdb/query.c", "const char *q = \"SELECT 1\"; /* SELECT in a comment */\n")
        put("perfdb/d.c", "/* \"SELECT 1\" in a comment */\n")
        if check(d):
            print("self-test: a clean tree was flagged: %s" % check(d))
            return 1
        put("perfdb/c.c", "const char *q = \"SELECT 1\";\n")
        found = check(d)
        if found != ["perfdb/c.c: 1 SELECT strings, at most 0: reads go to the query module"]:
            print("self-test: the planted read was not found alone: %s" % found)
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
