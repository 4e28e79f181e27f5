#!/usr/bin/env python3
"""ci/coverage.py - adds up gcov's counters of a --coverage build per folder
and per file, lists the lines no test reached in the to-do folders, and
stores the per-folder figures in a crossover perf store (ci/coverage.sh
runs it; docs/coverage.md).

What is counted, from `gcov --json-format --stdout --branch-probabilities`
on every object's notes file (.gcno, with its .gcda when the object ran):

  line      a source line gcc attached code to; hit when its count is > 0
  branch    one outcome of a conditional jump gcc emitted on a line; hit
            when that outcome was taken at least once (gcov -b's "taken
            at least once"; exception edges are left out)

A source file compiled into several objects (a header's static inline
functions, a file linked into several programs) is merged: a line is hit
when any object hit it, and a line's branches are the longest list any
object has, outcome i hit when any object took its i-th outcome.

Files count under their top-level folder in --src (FOLDERS); files outside
the tree (system headers) or under any other folder (the suites, generated
sources in the build) are left out. The to-do list covers model/, perfdb/,
cl/*.c (the OpenCL host code) and the kernels' drivers: kernels/*.c whose
name has no '__' (the per-ISA files and the .inc bodies they include are the
SIMD inner loops).

Exit: 0 done; 2 bad usage, a --db that is not a crossover perf store (or
one this cannot write: read-only, locked, a table coverage of another
shape), an --out that is not a directory, no counters found, or a table or
the store that cannot be written at the end; always one line on stderr.
"""
import argparse
import concurrent.futures
import json
import os
import sqlite3
import subprocess
import sys

FOLDERS = ["core", "kernels", "reference", "cl", "model", "perfdb", "cli", "include"]
XO_PERFDB_APP_ID = 0x786F7064  # perfdb/perfdb.h: PRAGMA application_id of a crossover store
COLUMNS = ["id", "date", "sha", "dirty", "folder", "lines", "lines_hit", "branches",
           "branches_hit", "todo"]
SCHEMA = """CREATE TABLE IF NOT EXISTS coverage(id INTEGER PRIMARY KEY, date TEXT NOT NULL,
  sha TEXT NOT NULL, dirty INTEGER NOT NULL, folder TEXT NOT NULL, lines INTEGER NOT NULL,
  lines_hit INTEGER NOT NULL, branches INTEGER NOT NULL, branches_hit INTEGER NOT NULL,
  todo INTEGER, UNIQUE(date, sha, folder))"""


def die(msg):
    print("xo: coverage: " + msg, file=sys.stderr)
    sys.exit(2)


def in_todo(rel):
    """True for a file whose uncovered lines go to the to-do list."""
    folder, _, name = rel.partition("/")
    if folder in ("model", "perfdb"):
        return True
    if folder == "cl":
        return "/" not in name and name.endswith(".c")
    if folder == "kernels":
        return "/" not in name and name.endswith(".c") and "__" not in name
    return False


def load_blind(path):
    """{file: ({function, ...}, reason)} from the blind list (ci/coverage-blind.txt)."""
    blind = {}
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip() or line.startswith("#"):
                    continue
                parts = line.split(None, 2)
                if len(parts) < 3:
                    die("%s:%d: want FILE FUNCTION[,FUNCTION...] REASON" % (path, n))
                blind[parts[0]] = (set(parts[1].split(",")), parts[2].strip())
    except OSError as e:
        die("--blind %s: %s" % (path, e.strerror))
    except UnicodeDecodeError as e:
        die("--blind %s: not UTF-8 text (byte %d)" % (path, e.start))
    return blind


def busy(e):
    """True when a SQLite error says another connection holds the lock."""
    return isinstance(e, sqlite3.OperationalError) and ("locked" in str(e) or "busy" in str(e))


def refuse(path, e, otherwise):
    """Exit 2 on a SQLite error of the store: locked, read-only, or otherwise."""
    if busy(e):
        die("--db %s: the store is locked by another process (%s); try again when it is done"
            % (path, e))
    if isinstance(e, sqlite3.OperationalError) and "readonly" in str(e):
        # a store in WAL mode fails even to read where its -wal/-shm cannot be made
        die("--db %s: the store cannot be written (%s)" % (path, e))
    die("--db %s: %s (%s)" % (path, otherwise, e))


def open_store(path):
    """The crossover store at path, opened and proven writable (a rolled-back
    row in table coverage), so that a store this run cannot fill is refused
    before the build; refuses anything else."""
    if path.startswith("postgresql://") or path.startswith("postgres://"):
        die("--db %s: coverage is stored in a SQLite store only" % path)
    if not os.path.isfile(path):
        die("--db %s: no such perf store (xo perf record creates one)" % path)
    # how long to wait for another writer (xo perf record) before giving up
    wait = float(os.environ.get("XO_COVERAGE_DB_WAIT", "10"))
    con = None
    try:
        con = sqlite3.connect(path, timeout=wait, isolation_level=None)
        app = con.execute("PRAGMA application_id").fetchone()[0]
        if app != XO_PERFDB_APP_ID:
            die("--db %s: not a crossover perf store (application_id %d)" % (path, app))
        cols = [r[1] for r in con.execute("PRAGMA table_info(coverage)")]
        if cols and cols != COLUMNS:
            die("--db %s: its table coverage has other columns (%s), not those this writes (%s)"
                % (path, ", ".join(cols), ", ".join(COLUMNS)))
    except sqlite3.Error as e:
        refuse(path, e, "not a readable SQLite database")
    try:
        con.execute("BEGIN IMMEDIATE")
        con.execute(SCHEMA)
        con.execute("INSERT INTO coverage(date, sha, dirty, folder, lines, lines_hit, branches,"
                    " branches_hit) VALUES('probe', 'probe', 0, 'probe', 0, 0, 0, 0)")
        con.execute("ROLLBACK")
    except sqlite3.Error as e:
        refuse(path, e, "the store cannot be written")
    return con


def run_gcov(notes):
    """gcov's JSON documents for a batch of .gcno files (one per line)."""
    p = subprocess.run(["gcov", "--json-format", "--stdout", "--branch-probabilities"] + notes,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    if p.returncode != 0:
        die("gcov failed (exit %d) on %s ..." % (p.returncode, notes[0]))
    return [json.loads(l) for l in p.stdout.decode("utf-8", "replace").splitlines() if l.strip()]


def collect(build, src, jobs):
    """{relative path: {line: [count, function, [branch hit, ...]]}} over the build."""
    notes = []
    for root, _, names in os.walk(build):
        notes += [os.path.join(root, n) for n in names if n.endswith(".gcno")]
    if not notes:
        die("--build %s: no .gcno files (not a --coverage build)" % build)
    notes.sort()
    batches = [notes[i:i + 32] for i in range(0, len(notes), 32)]
    src = os.path.realpath(src)
    files = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        for docs in ex.map(run_gcov, batches):
            for doc in docs:
                cwd = doc.get("current_working_directory", build)
                for f in doc.get("files", []):
                    path = os.path.realpath(os.path.join(cwd, f["file"]))
                    rel = os.path.relpath(path, src)
                    if rel.startswith("..") or rel.split("/")[0] not in FOLDERS or "/" not in rel:
                        continue
                    merge(files.setdefault(rel, {}), f["lines"])
    return files


def merge(lines, entries):
    for e in entries:
        br = [b["count"] > 0 for b in e.get("branches", []) if not b.get("throw")]
        cur = lines.get(e["line_number"])
        if cur is None:
            lines[e["line_number"]] = [e["count"], e.get("function_name", "?"), br]
            continue
        cur[0] += e["count"]
        old = cur[2]
        cur[2] = [(old[i] if i < len(old) else False) or (br[i] if i < len(br) else False)
                  for i in range(max(len(old), len(br)))]


def file_stats(lines):
    n = len(lines)
    hit = sum(1 for v in lines.values() if v[0] > 0)
    nb = sum(len(v[2]) for v in lines.values())
    bh = sum(sum(v[2]) for v in lines.values())
    return [n, hit, nb, bh]


def ranges(nums):
    """'3-5, 9' from [3, 4, 5, 9]."""
    out, start, prev = [], None, None
    for n in nums + [None]:
        if start is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            out.append(str(start) if start == prev else "%d-%d" % (start, prev))
        start = prev = n
    return ", ".join(out)


def todo_runs(lines):
    """Per function, the uncovered lines as runs: two uncovered lines join a
    run when no covered line lies between them (blank lines and comments,
    which have no code, do not break it)."""
    funcs = {}
    order = sorted(lines)
    run = []
    for ln in order + [None]:
        v = lines.get(ln) if ln is not None else None
        if v is not None and v[0] == 0 and (not run or lines[run[-1]][1] == v[1]):
            run.append(ln)
            continue
        if run:
            funcs.setdefault(lines[run[0]][1], []).append(
                str(run[0]) if len(run) == 1 else "%d-%d" % (run[0], run[-1]))
        run = [ln] if v is not None and v[0] == 0 else []
    return funcs


def write_todo(todo, rel, lines, st, blind):
    """The file's uncovered lines by function; those of the blind list's
    functions apart, under its reason. Returns the to-do count."""
    funcs, reason = blind.get(rel, (set(), ""))
    runs = todo_runs(lines)
    work = {fn: rs for fn, rs in runs.items() if fn not in funcs}
    n = sum(1 for v in lines.values() if v[0] == 0 and v[1] not in funcs)
    if work:
        todo.write("\n%s (%d of %d lines)\n" % (rel, n, st[0]))
        for fn, rs in work.items():
            todo.write("  %s: %s\n" % (fn, ", ".join(rs)))
    gone = sorted(funcs - {v[1] for v in lines.values()})
    if gone:
        print("xo: coverage: warning: ci/coverage-blind.txt names %s in %s, which has no such"
              " function (a stale entry)" % (", ".join(gone), rel), file=sys.stderr)
    blind_runs = {fn: rs for fn, rs in runs.items() if fn in funcs}
    if blind_runs:
        todo.write("\n%s, not measured: %s\n" % (rel, reason))
        for fn, rs in blind_runs.items():
            todo.write("  %s: %s\n" % (fn, ", ".join(rs)))
    return n


def write_outputs(files, out, blind):
    os.makedirs(out, exist_ok=True)
    folders = {f: [0, 0, 0, 0, 0] for f in FOLDERS}
    todo_scope = {f: False for f in FOLDERS}
    rows = []
    with open(os.path.join(out, "todo.txt.tmp"), "w") as todo:
        todo.write("# Lines no quick test reaches (ci/coverage.sh): model/, perfdb/, cl/*.c and\n"
                   "# kernels/*.c without '__', by file and function; ranges run over lines\n"
                   "# without code (blank, comments) but never over a covered line.\n"
                   "# 'not measured': code gcov cannot count (ci/coverage-blind.txt says why).\n")
        for rel in sorted(files):
            lines = files[rel]
            st = file_stats(lines)
            folder = rel.split("/")[0]
            t = write_todo(todo, rel, lines, st, blind) if in_todo(rel) else None
            rows.append((rel, folder, st, t))
            agg = folders[folder]
            for i in range(4):
                agg[i] += st[i]
            if t is not None:
                todo_scope[folder] = True
                agg[4] += t
    os.replace(os.path.join(out, "todo.txt.tmp"), os.path.join(out, "todo.txt"))
    total = [sum(folders[f][i] for f in FOLDERS) for i in range(5)]
    with open(os.path.join(out, "coverage.tsv"), "w") as f:
        f.write("folder\tlines\tlines_hit\tbranches\tbranches_hit\n")
        for name, v in [(k, folders[k]) for k in FOLDERS] + [("all", total)]:
            f.write("%s\t%d\t%d\t%d\t%d\n" % (name, v[0], v[1], v[2], v[3]))
    with open(os.path.join(out, "coverage-files.tsv"), "w") as f:
        f.write("file\tfolder\tlines\tlines_hit\tbranches\tbranches_hit\ttodo\n")
        for rel, folder, st, t in rows:
            f.write("%s\t%s\t%d\t%d\t%d\t%d\t%s\n" % (rel, folder, *st, "-" if t is None else t))
    return folders, todo_scope, total


def pct(a, b):
    return "%5.1f%%" % (100.0 * a / b) if b else "    -"


def table(folders, todo_scope, total):
    out = ["%-10s %7s %7s %7s %9s %9s %7s" % ("folder", "lines", "hit", "line%", "branches",
                                               "branch%", "to-do")]
    for name, v in [(k, folders[k]) for k in FOLDERS] + [("all", total)]:
        t = str(v[4]) if name == "all" or todo_scope.get(name) else "-"
        out.append("%-10s %7d %7d %7s %9d %9s %7s" % (name, v[0], v[1], pct(v[1], v[0]), v[2],
                                                      pct(v[3], v[2]), t))
    return "\n".join(out) + "\n"


def store(con, args, folders, todo_scope):
    """The run's per-folder rows, in one transaction: every folder or none."""
    try:
        con.execute("BEGIN IMMEDIATE")
        con.execute(SCHEMA)
        for name in FOLDERS:
            v = folders[name]
            if not v[0]:
                continue
            con.execute("INSERT OR REPLACE INTO coverage(date, sha, dirty, folder, lines, lines_hit,"
                        " branches, branches_hit, todo) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (args.date, args.sha, args.dirty, name, v[0], v[1], v[2], v[3],
                         v[4] if todo_scope[name] else None))
        con.execute("COMMIT")
    except sqlite3.Error as e:
        if con.in_transaction:
            con.execute("ROLLBACK")
        die("--db %s: the coverage rows were not stored (%s)%s" % (
            args.db, e, "; another process holds the lock" if busy(e) else ""))
    finally:
        con.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check-db", metavar="FILE", help="only check that FILE is a crossover store")
    ap.add_argument("--build")
    ap.add_argument("--src")
    ap.add_argument("--out")
    ap.add_argument("--db")
    ap.add_argument("--blind", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                    "coverage-blind.txt"))
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--sha", default="unknown")
    ap.add_argument("--dirty", type=int, choices=(0, 1), default=0)
    ap.add_argument("--date", default="")
    try:
        args = ap.parse_args()
    except SystemExit as e:
        sys.exit(2 if e.code else 0)
    if args.check_db:
        open_store(args.check_db).close()
        return 0
    if not (args.build and args.src and args.out):
        die("--build, --src and --out are needed")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        die("--out %s: exists and is not a directory" % args.out)
    if args.db and not args.date:
        die("--db needs --date")
    con = open_store(args.db) if args.db else None
    files = collect(args.build, args.src, max(1, args.j))
    if not files:
        die("--build %s: no counters of a file under %s in %s" % (args.build, args.src,
                                                                "/".join(FOLDERS)))
    blind = load_blind(args.blind)
    try:
        folders, todo_scope, total = write_outputs(files, args.out, blind)
        text = table(folders, todo_scope, total)
        with open(os.path.join(args.out, "coverage.txt"), "w") as f:
            f.write("coverage of commit %s%s, %s\n" % (args.sha, " (dirty)" if args.dirty else "",
                                                       args.date) + text)
    except OSError as e:
        die("--out %s: cannot write the tables (%s: %s)" % (args.out, e.filename or args.out,
                                                            e.strerror))
    sys.stdout.write(text)
    print("coverage: tables in %s (coverage.tsv, coverage-files.tsv, todo.txt)" % args.out)
    if con:
        store(con, args, folders, todo_scope)
        print("coverage: stored in %s (table coverage)" % args.db)
    return 0


if __name__ == "__main__":
    sys.exit(main())
