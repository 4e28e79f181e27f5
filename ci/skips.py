#!/usr/bin/env python3
"""ci/skips.py - no check is skipped in CI unless ci/skips.tsv allows it.

    python3 ci/skips.py --stage STAGE [--list FILE] JUNIT...

Reads the JUnit XML that `ctest --output-junit` wrote (ci/lib.sh's xo_ctest
runs ctest that way, with every passing test's whole output kept) and finds
every skip in it:
  - a test ctest did not run: SKIP_RETURN_CODE, a skip regular expression,
    an executable not found, a test disabled (status "notrun"/"disabled");
  - a CMocka case skipped inside a test that ran ("[  SKIPPED ] case" lines;
    the summary line "[  SKIPPED ] N test(s), listed below:" is not a case).
A test-level skip is named by the ctest test name (keras.load_in_keras), a
case-level one by the test name, a slash and the case (perf_report/test_x).

The list (default ci/skips.tsv beside this script) is the one place a skip
may be allowed: one entry a line, four tab-separated fields
    NAME  STAGES  CONDITION  REASON
NAME is a test or TEST/CASE name, or an fnmatch pattern of them; STAGES is a
comma-separated list of the stages where the skip is allowed (`*`: all of
them); CONDITION says when it skips, REASON why that is right. Blank lines
and lines starting with # are comments.

Exit status: 0 when every skip is listed for this stage and no entry for this
stage is stale; 1 naming each unlisted skip ("skips: not allowed: ...") and
each stale entry ("skips: stale entry: ..."; an entry whose tests ran in
this stage and none of them skipped, so the list no longer says what
happens); 2 on bad input (a missing or unreadable JUnit file, a malformed
list line), with one line on stderr.
"""
import argparse
import fnmatch
import os
import re
import sys
import xml.etree.ElementTree as ET

# Characters XML 1.0 does not allow; a test that prints them (a binary file
# dumped by mistake) must not make the whole report unreadable.
BAD_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
CASE_SKIP = re.compile(r"^\[  SKIPPED \] (\S.*?)\s*$")
CASE_SUMMARY = re.compile(r"^\d+ test\(s\), listed below:$")


class BadInput(Exception):
    pass


def read_list(path):
    """The entries of the list: (line number, name, stages, condition, reason)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise BadInput("cannot read the skip list %s: %s" % (path, e.strerror))
    entries = []
    for no, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 4 or not all(x.strip() for x in fields):
            raise BadInput("%s:%d: want 4 tab-separated fields NAME STAGES CONDITION REASON, got %d"
                           % (path, no, len(fields)))
        name, stages, cond, reason = (x.strip() for x in fields)
        entries.append((no, name, [s.strip() for s in stages.split(",")], cond, reason))
    return entries


def read_junit(path):
    """Per test: (name, ran, skipped cases) where ran is False for a skipped test."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
    except OSError as e:
        raise BadInput("cannot read the ctest results %s: %s" % (path, e.strerror))
    try:
        root = ET.fromstring(BAD_XML.sub("?", text))
    except ET.ParseError as e:
        raise BadInput("%s is not JUnit XML: %s" % (path, e))
    tests = []
    for tc in root.iter("testcase"):
        name = tc.get("name", "")
        status = tc.get("status", "")
        ran = status not in ("notrun", "disabled") and tc.find("skipped") is None
        cases = []
        out = tc.find("system-out")
        if ran and out is not None and out.text:
            for line in out.text.splitlines():
                m = CASE_SKIP.match(line)
                if m and not CASE_SUMMARY.match(m.group(1)) and m.group(1) not in cases:
                    cases.append(m.group(1))
        failed = tc.find("failure") is not None or status == "fail"
        sk = tc.find("skipped")
        why = sk.get("message", status) if sk is not None else status
        tests.append((name, ran, failed, cases, why))
    return tests


def applies(entry, stage):
    return "*" in entry[2] or stage in entry[2]


def check(stage, entries, tests):
    """The problem lines (an unlisted skip, a stale entry) and a summary line."""
    mine = [e for e in entries if applies(e, stage)]
    used = {e[0]: False for e in mine}  # entry line -> it matched a skip here
    seen = {e[0]: False for e in mine}  # entry line -> a test it names ran here
    bad, allowed = [], []
    for name, ran, failed, cases, why_not_run in tests:
        skips = [name] if not ran else ["%s/%s" % (name, c) for c in cases]
        for s in skips:
            hit = [e for e in mine if fnmatch.fnmatchcase(s, e[1])]
            for e in hit:
                used[e[0]] = True
            if hit:
                allowed.append(s)
            else:
                why = ("ctest: %s" % why_not_run) if not ran else "a CMocka case"
                bad.append("skips: not allowed: %s (%s) in stage %s" % (s, why, stage))
        # an entry can only be stale where what it names ran to the end
        if failed:
            continue
        for e in mine:
            test_pat = e[1].split("/", 1)[0]
            if "/" in e[1]:
                if ran and fnmatch.fnmatchcase(name, test_pat):
                    seen[e[0]] = True
            elif fnmatch.fnmatchcase(name, e[1]):
                seen[e[0]] = True
    stale = ["skips: stale entry: line %d %s (stages %s): it ran in stage %s and did not skip"
             % (e[0], e[1], ",".join(e[2]), stage)
             for e in mine if seen[e[0]] and not used[e[0]]]
    summary = ("skips: stage %s: %d tests, %d skips allowed by the list%s, %d not allowed, "
                 "%d stale entries" % (stage, len(tests), len(allowed),
                                       (" (" + ", ".join(allowed) + ")") if allowed else "",
                                       len(bad), len(stale)))
    return bad + stale, summary


def main():
    ap = argparse.ArgumentParser(description="fail on any skip that ci/skips.tsv does not allow")
    ap.add_argument("--stage", required=True, help="the CI stage these results come from")
    ap.add_argument("--list", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "skips.tsv"))
    ap.add_argument("junit", nargs="+")
    a = ap.parse_args()
    try:
        entries = read_list(a.list)
        tests = []
        for path in a.junit:
            tests.extend(read_junit(path))
    except BadInput as e:
        print("skips: %s" % e, file=sys.stderr)
        return 2
    problems, summary = check(a.stage, entries, tests)
    for line in problems:
        print(line, file=sys.stderr)
    print(summary)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
