#!/usr/bin/env python3
"""ci/skips.py - no check is skipped in CI unless ci/skips.tsv allows it.

    python3 ci/skips.py --stage STAGE [--list FILE] JUNIT...

Reads the JUnit XML that `ctest --output-junit` wrote (ci/lib.sh's xo_ctest
runs ctest that way, with every passing test's whole output kept) and finds
every skip in it:
  - a test ctest did not run: SKIP_RETURN_CODE, a skip regular expression,
    an executable not found, a test disabled (status "notrun"/"disabled");
  - a CMocka case skipped inside a test that ran: a "[  SKIPPED ] case" line
    while CMocka runs that case (after its "[ RUN      ] case" line; text the
    case printed without a newline may come before it on the line), or one
    of the list under CMocka's summary "[  SKIPPED ] N test(s), listed
    below:". A "[  SKIPPED ] x" line anywhere else (a child process's log) is
    not a skip. CMocka's TAP format ("not ok N # SKIP case", when a test sets
    CMOCKA_MESSAGE_OUTPUT=TAP itself; xo_ctest unsets it) counts too.
A passing test whose output ctest cut short (its "[This part of the test
output was removed ..." line, or output of --max-output bytes or more) may
have lost its skip lines: it fails the check ("output truncated").
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
happens) and each passing test whose output was truncated; 2 on bad input
(a missing or unreadable JUnit file, a malformed or non-UTF-8 list), with
one line on stderr.
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
SKIP_MARK = "[  SKIPPED ] "
RUN_MARK = "[ RUN      ] "
OK_MARK = "[       OK ] "
CASE_SKIP = re.compile(r"\[  SKIPPED \] (\S.*?)\s*$")
SUMMARY = re.compile(r"^\[  SKIPPED \] \d+ test\(s\), listed below:\s*$")
TAP_SKIP = re.compile(r"(?:^|[^\w])(?:not )?ok \d+ # SKIP (\S.*?)\s*$")
# ctest's line where it cut a passing test's output at --test-output-size-passed
TRUNCATED = "[This part of the test output was removed"


class BadInput(Exception):
    pass


def read_list(path):
    """The entries of the list: (line number, name, stages, condition, reason)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise BadInput("cannot read the skip list %s: %s" % (path, e.strerror))
    except UnicodeDecodeError as e:
        raise BadInput("the skip list %s is not UTF-8 text (byte %d)" % (path, e.start))
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


def case_skips(text):
    """The CMocka cases a test's output says were skipped, in order."""
    cases = []
    running = None  # the case CMocka announced last with "[ RUN      ] case"
    in_summary = False  # inside the list under "[  SKIPPED ] N test(s), listed below:"
    for line in text.splitlines():
        name = None
        if SUMMARY.match(line):
            in_summary = True
            continue
        if in_summary:
            m = CASE_SKIP.match(line) if line.startswith(SKIP_MARK) else None
            if m:
                name = m.group(1)
            else:
                in_summary = False
        if name is None and line.startswith(RUN_MARK):
            running = line[len(RUN_MARK):].strip()
            continue
        if name is None and line.startswith(OK_MARK):
            running = None
            continue
        if name is None and running is not None:
            m = CASE_SKIP.search(line)
            if m and m.group(1) == running:
                name = running
                running = None
        if name is None:
            m = TAP_SKIP.search(line)
            if m:
                name = m.group(1)
        if name is not None and name not in cases:
            cases.append(name)
    return cases


def read_junit(path, max_output):
    """Per test: (name, ran, failed, skipped cases, why not run, truncated)
    where ran is False for a skipped test."""
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
        out = tc.find("system-out")
        text = out.text if out is not None and out.text else ""
        cases = case_skips(text) if ran else []
        failed = tc.find("failure") is not None or status == "fail"
        truncated = ran and not failed and (TRUNCATED in text or
                                            len(text.encode("utf-8")) >= max_output)
        sk = tc.find("skipped")
        why = sk.get("message", status) if sk is not None else status
        tests.append((name, ran, failed, cases, why, truncated))
    return tests


def applies(entry, stage):
    return "*" in entry[2] or stage in entry[2]


def check(stage, entries, tests):
    """The problem lines (an unlisted skip, a stale entry) and a summary line."""
    mine = [e for e in entries if applies(e, stage)]
    used = {e[0]: False for e in mine}  # entry line -> it matched a skip here
    seen = {e[0]: False for e in mine}  # entry line -> a test it names ran here
    bad, allowed = [], []
    for name, ran, failed, cases, why_not_run, truncated in tests:
        if truncated:
            bad.append("skips: output truncated: skips cannot be checked: %s in stage %s (it"
                       " printed more than ctest keeps, XO_CTEST_OUTPUT_MAX in ci/lib.sh:"
                       " print less or raise it)" % (name, stage))
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
        # and all its output was kept
        if failed or truncated:
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
    summary = ("skips: stage %s: %d tests, %d skips allowed by the list%s, %d problems, "
               "%d stale entries" % (stage, len(tests), len(allowed),
                                     (" (" + ", ".join(allowed) + ")") if allowed else "",
                                     len(bad), len(stale)))
    return bad + stale, summary


def main():
    ap = argparse.ArgumentParser(description="fail on any skip that ci/skips.tsv does not allow")
    ap.add_argument("--stage", required=True, help="the CI stage these results come from")
    ap.add_argument("--list", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "skips.tsv"))
    ap.add_argument("--max-output", type=int, default=8000000, metavar="BYTES",
                    help="ctest's --test-output-size-passed: a passing test's output of this"
                         " size or more may have been cut")
    ap.add_argument("junit", nargs="+")
    try:
        a = ap.parse_args()
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        entries = read_list(a.list)
        tests = []
        for path in a.junit:
            tests.extend(read_junit(path, a.max_output))
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
