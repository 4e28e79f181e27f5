#!/usr/bin/env python3
"""docs_links.py SRC - the README and docs/ stand alone:
 - every file they name (markdown links, and words ending in .md, .sh, .py,
   .c, .h, .cmake, .txt, .model, .gp in backticks or links) exists in the tree;
 - nothing points outside the tree (../shared, ../, absolute /work paths);
 - one build directory: a binary is run as build/cli/xo, never from another
   build directory (the scripts' own build-ci/, build-asan/, build-release/
   may be named, not run from);
 - the README says how to install xo and put it on the PATH.
Exit 0 pass, 1 fail.
"""
import os
import re
import sys


def main():
    src = sys.argv[1]
    files = [os.path.join(src, "README.md")] + sorted(
        os.path.join(src, "docs", f) for f in os.listdir(os.path.join(src, "docs"))
        if f.endswith(".md"))
    bad = []
    for path in files:
        text = open(path, encoding="utf-8").read()
        rel = os.path.relpath(path, src)
        base = os.path.dirname(path)
        for m in re.finditer(r"\]\(([^)#\s]+)(#[^)]*)?\)", text):
            target = m.group(1)
            if re.match(r"[a-z]+://", target):
                continue
            if not os.path.exists(os.path.join(base, target)):
                bad.append(f"{rel}: link to {target}: no such file")
        for m in re.finditer(r"`([A-Za-z0-9_./*-]+\.(?:md|sh|py|c|h|cmake|txt|model|gp|cl|def|inc))`",
                             text):
            name = m.group(1)
            # placeholders (DIR/, X.npy) and style.md's citations of other
            # projects' files (ggml's ci/run.sh, SQLite's src/bitvec.c)
            # and outputs the scripts generate (build*/, out/)
            first = name.split("/")[0]
            if "*" in name or first.isupper() or rel == "docs/style.md" or \
               first.startswith("build") or first == "out":
                continue
            cands = [os.path.join(src, name), os.path.join(base, name)]
            if not any(os.path.exists(c) for c in cands) and "/" in name:
                bad.append(f"{rel}: names `{name}`: not in the tree")
        for m in re.finditer(r"\b([A-Z][A-Z]+)\.md\b", text):
            if not os.path.exists(os.path.join(base, m.group(0))) and \
               not os.path.exists(os.path.join(src, m.group(0))):
                bad.append(f"{rel}: names {m.group(0)}: not in the tree")
        for m in re.finditer(r"\.\./shared|\(\.\./|/work/", text):
            bad.append(f"{rel}: points outside the tree: '{m.group(0)}'")
        for m in re.finditer(r"\b(build-[A-Za-z0-9_-]+)/cli/xo\b", text):
            bad.append(f"{rel}: runs xo from {m.group(1)}/ (the docs use build/)")
    cm = open(os.path.join(src, "CMakeLists.txt")).read()
    if "../shared" in cm:
        bad.append("CMakeLists.txt: points to ../shared")
    readme = open(files[0], encoding="utf-8").read()
    if "cmake --install build" not in readme or "PATH" not in readme:
        bad.append("README.md: does not say how to install xo and put it on the PATH")
    for b in bad:
        print(b)
    print(f"{len(files)} files checked, {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
