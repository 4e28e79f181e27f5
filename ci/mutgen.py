#!/usr/bin/env python3
"""ci/mutgen.py - mutants made by a program from the lines a change added.

Diff-based mutation testing (docs/mutation.md, "Generated mutants"): for a
commit range, every added or modified line of product code (core/ kernels/
reference/ cl/ model/ perfdb/ cli/ include/; .c .h .inc .cl) gets small
realistic bugs - relational, arithmetic and logical operator swaps, +-1 on
integer constants, loop bounds and index shifts, negated conditions,
deleted statements and calls, swapped plain-identifier arguments,
true/false, an early return. A small C tokenizer keeps comments, strings,
character literals, preprocessor lines and declarations out of reach, and
"arid" code (the arguments of error-message and assertion calls) is left
alone. Each mutant is a patch in ci/mutants' format for ci/mutate.sh --from
DIR, named by a stable id: a hash of the path, the line's text, the
operator with its place in the line (and among identical candidates
there), and which of the file's identical lines it is - never the line
number, so an id survives the line moving.

Usage: ci/mutgen.py (--range A..B | --since-day) [--per-line N] [--out DIR]
                    [--equivalents FILE] [--repo DIR] [--list] [--first N]
  --range A..B       the lines B adds to A (git diff A B)
  --since-day        the first-parent commits of HEAD whose committer date
                     is within 24 h of HEAD's: the range FIRST^..HEAD
  --per-line N       mutants per line, picked deterministically from the
                     operators that apply, one operator each first (default
                     1; 0: every mutant)
  --out DIR          where the patches and index.tsv go (default out/mutgen;
                     its old output is removed first; a folder holding
                     other files is refused)
  --first N          write the patches of the first N ids in sorted order
                     only (CI's sample: ci/test.sh), not thousands it would
                     then remove; index.tsv lists every mutant all the same
  --equivalents FILE survivors known to be equivalent, with their reasons
                     (default ci/mutgen-equivalent.tsv of the repository,
                     which alone may be absent)
  --repo DIR         the git repository (default: the one holding this file)
  --list             print the counts per operator; write nothing
Exit: 0 done (no mutants is not an error: the change had no product code);
2 bad usage, a bad range, a bad equivalents file or --out folder, a diff
that cannot be read, or two mutants with one id.
"""

import argparse
import hashlib
import os
import re
import subprocess
import sys

PRODUCT_DIRS = ("core/", "kernels/", "reference/", "cl/", "model/", "perfdb/", "cli/", "include/")
PRODUCT_EXTS = (".c", ".h", ".inc", ".cl")
OPERATORS = ("rel", "bound", "arith", "const", "index", "negate", "delete", "swap", "bool",
             "return", "logic")

# Calls whose arguments are messages or checks, not behaviour a test pins:
# error messages, usage errors, logging, assertions.
ARID_CALLS = re.compile(r"^(fprintf|fputs|puts|perror|printf|xo_error|xo_usage_error|xo_cl_fail|"
                        r"refuse|sql_err|db_err|xo_sql_set_error|XO_ASSERT|assert|"
                        r"xo_log\w*|xo_warn\w*|\w+_errorf?)$")
# Calls whose only effect is to hand a resource back. Deleting one leaks and
# changes nothing a test can see: the runner's passes have no leak checker,
# so such a mutant would be a false survivor (leaks are LeakSanitizer's job,
# in CI's asan stage). Their statements are never deleted; a call whose
# result is used (rc = fclose(f)) is an assignment and still is.
RELEASE_CALLS = re.compile(r"^(free|fclose|close|closedir|pclose|munmap|\w+_free|\w+_close|"
                           r"\w+_finalize|\w+_destroy|\w+_release|H5\w*close|PQclear|PQfinish|"
                           r"clRelease\w+)$")
KEYWORDS = {"return", "goto", "case", "default", "else", "do", "sizeof", "if", "while", "for",
            "switch", "break", "continue", "_Alignof", "alignof"}
QUALIFIERS = {"const", "static", "volatile", "unsigned", "signed", "struct", "enum", "union",
              "register", "inline", "extern", "__global", "__local", "__constant", "__private",
              "global", "local", "constant", "private", "restrict", "__restrict", "_Thread_local"}
NUMERIC_TYPES = {"int", "long", "short", "char", "size_t", "ssize_t", "double", "float",
                 "unsigned", "signed", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",
                 "uint16_t", "uint32_t", "uint64_t", "uintptr_t", "intptr_t", "ptrdiff_t",
                 "uint", "ulong", "ushort", "uchar", "half"}
# Declaration specifiers that take a parenthesized argument, and static
# assertions: compile-time statements a mutant could only break the build of.
SPECIFIER_CALLS = {"_Alignas", "alignas", "__attribute__", "__attribute", "__declspec"}
STATIC_ASSERT = re.compile(r"^(_Static_assert|static_assert|\w*_STATIC_ASSERT)$")
REL_SWAP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
ARITH_SWAP = {"+": "-", "-": "+", "*": "/", "/": "*", "%": "*", "+=": "-=", "-=": "+=",
              "*=": "/=", "/=": "*=", "++": "--", "--": "++"}
PUNCT = sorted("... <<= >>= -> ++ -- << >> <= >= == != && || += -= *= /= %= &= |= ^= ## "
               "[ ] ( ) { } . & * + - ~ ! / % < > ^ | ? : ; = , #".split(), key=len,
               reverse=True)


def die(msg):
    print("xo: mutgen: " + msg, file=sys.stderr)
    sys.exit(2)


class Tok:
    __slots__ = ("kind", "text", "line", "col", "end", "arid", "decl", "ctx", "func", "alt")

    def __init__(self, kind, text, line, col, end):
        self.kind, self.text, self.line, self.col, self.end = kind, text, line, col, end
        self.arid = False  # inside the arguments of a message or assertion call
        self.decl = False  # part of a declaration before its initializer
        self.ctx = "file"  # brace context: file, code, init or agg
        self.func = None  # the function whose body holds the token
        self.alt = False  # in a conditional branch after one that may be live


def pp_directive(text):
    """The name and argument of a preprocessor line: ('if', '0'), or None."""
    m = re.match(r"\s*#\s*([A-Za-z_]+)\s*(.*?)\s*(?:/[*/].*)?$", text)
    return (m.group(1), m.group(2)) if m else None


class Conditionals:
    """Which lines `#if 0` (or the `#else` of `#if 1`) compiles out: a stack
    of open conditional groups, each [live now, a later branch may be live,
    an earlier branch may have been live]. Any other condition is unknown and
    taken as live. A branch after one that may have been live is an
    alternative (alt): its code is mutated, but its braces are not counted,
    as only one branch is compiled (#ifdef X / if (a) { / #else / if (b) {
    / #endif opens one block, not two)."""

    def __init__(self):
        self.stack = []

    def dead(self):
        return any(not g[0] for g in self.stack)

    def alt(self):
        return any(g[2] for g in self.stack)

    def directive(self, name, arg):
        const = arg.strip("() ")
        if name in ("if", "ifdef", "ifndef"):
            known = name == "if" and const in ("0", "1")
            self.stack.append([const == "1", const == "0", False] if known else [True, True, False])
        elif name.startswith("elif") and self.stack:
            g = self.stack[-1]
            self.stack[-1] = [g[1], g[1], g[2] or g[0]]
        elif name == "else" and self.stack:
            g = self.stack[-1]
            self.stack[-1] = [g[1], False, g[2] or g[0]]
        elif name == "endif" and self.stack:
            self.stack.pop()


def string_end(text, i, quote):
    """Where the literal whose body starts at i ends: the index after its
    closing quote; len(text) when the line ends without one; len(text) + 1
    when its last backslash escapes the newline (the literal goes on)."""
    n = len(text)
    while i < n and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1 if i < n else i


def tokenize(lines):
    """C tokens of the file (a list of lines without newlines), with comments,
    preprocessor lines (and their continuations) and code compiled out by
    `#if 0` dropped, and string or character literals kept as 'str' tokens
    so nothing inside them is ever mutated. The lexer's state (inside a
    block comment, a literal or a `//` comment continued by a backslash-
    newline, a directive continued by one or by a comment) carries from line
    to line, through preprocessor and compiled-out lines too; a carriage
    return ending the line is not part of it."""
    toks = []
    in_comment = False  # inside /* */
    in_str = None  # the quote of a literal continued by backslash-newline
    line_cmt = False  # a // comment continued by backslash-newline
    pp = False  # a directive goes on onto this line
    cond = Conditionals()
    for ln, raw in enumerate(lines):
        text = raw[:-1] if raw.endswith("\r") else raw
        n = len(text)
        cont = text.endswith("\\")
        if line_cmt:
            line_cmt = cont
            continue
        if not (in_comment or in_str or pp) and text.lstrip().startswith("#"):
            d = pp_directive(text)
            if d:
                cond.directive(*d)
            pp = True
        emit = not pp and not cond.dead()
        alt = cond.alt()

        def add(kind, a, b):
            if emit:
                toks.append(Tok(kind, text[a:b], ln, a, min(b, n)))
                toks[-1].alt = alt

        i = 0
        if in_str:
            j = string_end(text, 0, in_str)
            add("str", 0, j)
            in_str = in_str if j > n else None
            i = j
        while i < n:
            if in_comment:
                j = text.find("*/", i)
                if j < 0:
                    break
                in_comment, i = False, j + 2
                continue
            c = text[i]
            if c in " \t\r\f\v":
                i += 1
            elif text.startswith("/*", i):
                in_comment = True
                i += 2
            elif text.startswith("//", i):
                line_cmt = cont
                break
            elif c in "\"'":
                j = string_end(text, i + 1, c)
                if j > n:
                    in_str = c
                add("str", i, j)
                i = j
            elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
                m = re.match(r"(0[xX][0-9a-fA-F']+[uUlL]*|[0-9.]+([eEpP][+-]?[0-9]+)?"
                             r"[fFuUlLhH]*)", text[i:])
                add("num", i, i + m.end())
                i += m.end()
            elif c.isalpha() or c == "_":
                m = re.match(r"[A-Za-z_0-9]+", text[i:])
                add("id", i, i + m.end())
                i += m.end()
            else:
                for p in PUNCT:
                    if text.startswith(p, i):
                        add("op", i, i + len(p))
                        i += len(p)
                        break
                else:
                    i += 1
        # a comment spanning lines is one space: the directive goes on past it
        pp = pp and (cont or in_comment)
    return toks


def classify(toks):
    """Marks each token's brace context, the declaration parts of statements
    and the arid arguments; returns the return-value text of the function
    each token is in (None: no early return known for it), per token."""
    stack = []  # brace kinds
    start = 0  # first token of the current statement
    func_ret = [None] * len(toks)
    cur_ret = None
    cur_func = None
    paren = 0
    for k, t in enumerate(toks):
        t.ctx = stack[-1] if stack else "file"
        func_ret[k] = cur_ret if "code" in stack else None
        t.func = cur_func if "code" in stack else None
        if t.text == "(":
            paren += 1
        elif t.text == ")":
            paren = max(0, paren - 1)
        if t.kind == "op" and t.text in ("{", "}") and t.alt:
            pass  # a brace of an alternative branch: counted in the first
        elif t.kind == "op" and t.text == "{":
            prev = toks[k - 1].text if k else ""
            head = [x.text for x in toks[start:k]]
            top = all(s == "file" for s in stack)  # extern "C" { is file scope
            if stack and stack[-1] == "init" or prev in ("=", ","):
                kind = "init"
            elif head[:1] == ["extern"] and len(head) == 2 and toks[k - 1].kind == "str":
                kind = "file"
            elif any(h in ("struct", "union", "enum") for h in head) and "(" not in head:
                kind = "agg"
            elif top and prev == ")":
                kind = "code"
                cur_ret = return_value(toks[start:k])
                cur_func = function_name(toks[start:k])
            elif prev == ")" and head and head[0] not in KEYWORDS and "=" in head:
                kind = "init"  # a compound literal: x = (struct s){...}
            else:
                kind = "code" if (top or stack[-1] == "code") else stack[-1]
            stack.append(kind)
            start = k + 1
        elif t.kind == "op" and t.text == "}":
            if stack:
                stack.pop()
            if "code" not in stack:
                cur_ret = None
                cur_func = None
            start = k + 1
        elif t.kind == "op" and t.text == ";" and paren == 0:
            start = k + 1
        elif t.kind == "op" and t.text == ":" and k > 0 and \
                toks[k - 1].kind == "id" and k - 1 == start and paren == 0:
            start = k + 1  # a label
    mark_statements(toks)
    mark_arid(toks)
    return func_ret


def function_name(head):
    """The name a function definition whose head (tokens before its body's
    '{') is `head` defines: the identifier before the head's first '(' that
    follows one (int (*f(void))(int) is not handled: None)."""
    for k in range(1, len(head)):
        if head[k].text == "(" and head[k - 1].kind == "id":
            return head[k - 1].text
    return None


def return_value(head):
    """The value an early return gives in a function whose definition head
    (tokens before its body's '{') is `head`; None when no harmless one is
    known (a struct returned by value, an unknown typedef)."""
    names = [t.text for t in head]
    if "(" not in names:
        return None
    ret = [x for x in names[:names.index("(") - 1]
           if x not in QUALIFIERS and x not in ("__kernel", "kernel")
           and not x.startswith("__attribute")]
    if not ret:
        return None
    if "*" in ret:
        return "NULL"
    if ret == ["void"]:
        return ""
    if ret == ["bool"]:
        return "false"
    if ret == ["xo_status"] or names[:3] == ["enum", "xo_status"] or \
            ret[-1:] == ["xo_status"]:
        return "XO_OK"
    if all(x in NUMERIC_TYPES for x in ret):
        return "0"
    return None


def mark_statements(toks):
    """Declarations: a statement inside code or at file scope whose first
    tokens are qualifiers then TYPE [*...] NAME. Its tokens before the first
    '=' are marked; what follows (the initializer) stays mutable. Every
    file-scope token outside an initializer is a declaration too."""
    n = len(toks)
    k = 0
    while k < n:
        t = toks[k]
        if t.ctx in ("file", "agg"):
            t.decl = True
            k += 1
            continue
        if t.ctx != "code" or (k and toks[k - 1].text not in (";", "{", "}")):
            k += 1
            continue
        if STATIC_ASSERT.match(t.text):
            m = k
            while m < n and toks[m].text != ";":
                toks[m].decl = True
                m += 1
            if m < n:
                toks[m].decl = True
            k = m + 1
            continue
        j = skip_specifiers(toks, k)
        is_decl = False
        if j + 1 < n and toks[j].kind == "id" and toks[j].text not in KEYWORDS:
            m = j + 1
            while m < n and toks[m].text == "*":
                m += 1
            is_decl = (m < n and toks[m].kind == "id" and toks[m].text not in KEYWORDS
                       and (m > j + 1 or toks[m].text not in KEYWORDS))
            if j > k and toks[j].kind == "id":
                is_decl = True
        if is_decl:
            m = k
            depth = 0
            while m < n and not (depth == 0 and toks[m].text in (";", "=")):
                if toks[m].text in "([{":
                    depth += 1
                elif toks[m].text in ")]}":
                    depth -= 1
                toks[m].decl = True
                m += 1
            if m < n and toks[m].text == "=":
                toks[m].decl = True
            k = m + 1
            continue
        k += 1


def skip_specifiers(toks, k):
    """The index of the first token from k on that is not a qualifier or a
    parenthesized specifier (_Alignas(32), __attribute__((aligned(64))))."""
    n = len(toks)
    while k < n:
        if toks[k].text in QUALIFIERS:
            k += 1
        elif toks[k].text in SPECIFIER_CALLS and k + 1 < n and toks[k + 1].text == "(":
            close = matching(toks, k + 1)
            if close < 0:
                return k
            k = close + 1
        else:
            return k
    return k


def mark_arid(toks):
    """The arguments of message and assertion calls (ARID_CALLS)."""
    n = len(toks)
    for k in range(n - 1):
        t = toks[k]
        if t.kind == "id" and ARID_CALLS.match(t.text) and toks[k + 1].text == "(":
            if t.text in ("printf",):
                continue  # a command's output: tests read it
            if t.text == "fprintf" and not (k + 2 < n and toks[k + 2].text == "stderr"):
                continue
            t.arid = True
            depth = 0
            for m in range(k + 1, n):
                toks[m].arid = True
                if toks[m].text == "(":
                    depth += 1
                elif toks[m].text == ")":
                    depth -= 1
                    if depth == 0:
                        break


def matching(toks, k):
    """Index of the ')' matching the '(' at k, or -1."""
    depth = 0
    for m in range(k, len(toks)):
        if toks[m].text == "(":
            depth += 1
        elif toks[m].text == ")":
            depth -= 1
            if depth == 0:
                return m
    return -1


def is_operand_end(t):
    return t.kind in ("id", "num") and t.text not in KEYWORDS or t.text in (")", "]")


def line_mutants(lines, ln, ltoks, toks, func_ret):
    """Candidate mutants of line ln: (operator, where, new line texts) where
    new line texts replace line ln (an empty list deletes it). ltoks are the
    indices into toks of the tokens on that line."""
    text = lines[ln]
    out = []

    def repl(t, new):
        return text[:t.col] + new + text[t.end:]

    def ok(t):
        return not t.arid and not t.decl and t.ctx in ("code", "init") and t.kind != "str"

    usable = [k for k in ltoks if ok(toks[k])]
    if not usable:
        return out
    first = toks[ltoks[0]]
    in_for = first.text == "for"
    for k in usable:
        t = toks[k]
        prev = toks[k - 1] if k else None
        nxt = toks[k + 1] if k + 1 < len(toks) else None
        where = "%s@%d" % (t.text, ltoks.index(k))
        if t.ctx == "init":
            if t.kind == "num" and re.match(r"^(0[xX][0-9a-fA-F]+|0|[1-9][0-9]*)[uUlL]*$", t.text):
                add_const(out, t, repl, where)
            continue
        if t.kind == "op" and t.text in REL_SWAP and prev is not None and is_operand_end(prev):
            op = "bound" if in_for and t.text in ("<", "<=", ">", ">=") else "rel"
            out.append((op, where, [repl(t, REL_SWAP[t.text])]))
        elif t.kind == "op" and t.text in ("&&", "||"):
            if sole_logical(toks, ltoks, k):
                out.append(("logic", where, [repl(t, "||" if t.text == "&&" else "&&")]))
        elif t.kind == "op" and t.text in ARITH_SWAP:
            binary = prev is not None and is_operand_end(prev)
            if t.text in ("++", "--", "+=", "-=", "*=", "/="):
                out.append(("arith", where, [repl(t, ARITH_SWAP[t.text])]))
            elif binary and not (t.text == "*" and (nxt is None or nxt.text in (")", ","))) \
                    and not (t.text == "*" and prev.text in NUMERIC_TYPES | {"void", "bool"}):
                out.append(("arith", where, [repl(t, ARITH_SWAP[t.text])]))
        elif t.kind == "num" and re.match(r"^(0[xX][0-9a-fA-F]+|0|[1-9][0-9]*)[uUlL]*$", t.text):
            add_const(out, t, repl, where)
        elif t.kind == "id" and t.text in ("true", "false"):
            out.append(("bool", where, [repl(t, "false" if t.text == "true" else "true")]))
        elif t.kind == "id" and prev is not None and prev.text == "[" and nxt is not None \
                and nxt.text == "]" and t.text not in KEYWORDS:
            out.append(("index", where, [repl(t, t.text + " + 1")]))
        elif t.kind == "id" and t.text in ("if", "while") and nxt is not None and nxt.text == "(":
            close = matching(toks, k + 1)
            if close > 0 and toks[close].line == ln:
                inner = text[nxt.end:toks[close].col]
                new = text[:nxt.end] + "!(" + inner + ")" + text[toks[close].col:]
                out.append(("negate", where, [new]))
        if t.kind == "id" and nxt is not None and nxt.text == "(" and not t.arid and \
                t.text not in KEYWORDS:
            add_swap(out, toks, k, ln, text)
    add_statement_ops(out, lines, ln, ltoks, toks, func_ret)
    return out


def sole_logical(toks, ltoks, k):
    """True when the && or || at k is the only one at its parenthesis depth
    between its enclosing parentheses (or the line's ends): swapping one of
    several would mix && and || without parentheses, which -Wparentheses
    (an error under -Werror) refuses to build."""
    pos = ltoks.index(k)
    depth, lo = 0, 0
    for m in range(pos - 1, -1, -1):
        x = toks[ltoks[m]].text
        if x in (")", "]"):
            depth += 1
        elif x in ("(", "["):
            if depth == 0:
                lo = m + 1
                break
            depth -= 1
    depth, count = 0, 0
    for m in range(lo, len(ltoks)):
        x = toks[ltoks[m]].text
        if x in ("(", "["):
            depth += 1
        elif x in (")", "]"):
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and x in ("&&", "||"):
            count += 1
    return count == 1


def add_const(out, t, repl, where):
    m = re.match(r"^(0[xX][0-9a-fA-F]+|0|[1-9][0-9]*)([uUlL]*)$", t.text)
    v = int(m.group(1), 0)
    for d, name in ((1, "+1"), (-1, "-1")):
        if v + d < 0:
            continue
        new = (hex(v + d) if m.group(1)[:2] in ("0x", "0X") else str(v + d)) + m.group(2)
        out.append(("const", where + name, [repl(t, new)]))


def add_swap(out, toks, k, ln, text):
    """Two adjacent arguments of the call at k that are each one plain
    identifier (the types are unknown to a tokenizer; a swap of different
    types does not build and counts as stillborn)."""
    close = matching(toks, k + 1)
    if close < 0 or toks[close].line != ln:
        return
    args, cur, depth = [], [], 0
    for m in range(k + 2, close):
        x = toks[m]
        if x.text in "([{":
            depth += 1
        elif x.text in ")]}":
            depth -= 1
        if x.text == "," and depth == 0:
            args.append(cur)
            cur = []
        else:
            cur.append(x)
    args.append(cur)
    for a in range(len(args) - 1):
        x, y = args[a], args[a + 1]
        if len(x) == 1 and len(y) == 1 and x[0].kind == "id" and y[0].kind == "id" and \
                x[0].text != y[0].text and x[0].line == ln and y[0].line == ln and \
                x[0].text not in ("NULL", "true", "false") and \
                y[0].text not in ("NULL", "true", "false"):
            new = (text[:x[0].col] + y[0].text + text[x[0].end:y[0].col] + x[0].text +
                   text[y[0].end:])
            out.append(("swap", "%s(%s,%s)" % (toks[k].text, x[0].text, y[0].text), [new]))


def add_statement_ops(out, lines, ln, ltoks, toks, func_ret):
    """Deleting the line's statement (a call or an assignment that starts and
    ends on it) and an early return before it."""
    k0 = ltoks[0]
    t0 = toks[k0]
    # a line that reports an error (rc = refuse(...)) is arid: neither deleted
    # nor skipped by an early return, which would only test the message path
    if t0.ctx != "code" or any(toks[k].arid for k in ltoks):
        return
    if k0 > 0 and toks[k0 - 1].text not in (";", "{", "}"):
        return  # not the start of a statement
    last = toks[ltoks[-1]]
    names = [toks[k].text for k in ltoks]
    indent = re.match(r"[ \t]*", lines[ln]).group(0)
    val = func_ret[k0]
    # the early return skips the work of a block: before its first statement
    if val is not None and toks[k0 - 1].text == "{" and \
            t0.text not in ("case", "default", "else", "return", "}", "{") and \
            not (len(names) > 1 and names[1] == ":"):
        stmt = "return%s;" % (" " + val if val else "")
        stmt += "\r" if lines[ln].endswith("\r") else ""  # the file's line ending
        out.append(("return", "before", [indent + stmt, lines[ln]]))
    if t0.decl:
        return
    assigns = ("=", "+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "<<=", ">>=", "++", "--")
    if (t0.kind == "id" and t0.text not in KEYWORDS or t0.text == "*") and last.text == ";" \
            and names.count(";") == 1 and names.count("(") == names.count(")") and \
            len(names) > 2 and (names[1] == "(" or any(x in names for x in assigns)) and \
            not (names[1] == "(" and RELEASE_CALLS.match(t0.text)):
        out.append(("delete", "stmt", []))


def stable_id(path, text, op, where, occurrence):
    h = hashlib.sha1("\0".join((path, text.strip(), op, where, str(occurrence)))
                     .encode("utf-8", "surrogateescape"))
    return "g" + h.hexdigest()[:10]


def pick(cands, n, key):
    """n candidates, deterministic: operators ordered by a hash of the line,
    one candidate of each operator first."""
    if n <= 0 or len(cands) <= n:
        return cands
    by_op = {}
    for c in cands:
        by_op.setdefault(c[0], []).append(c)
    ops = sorted(by_op, key=lambda o: hashlib.sha1((key + o).encode("utf-8", "surrogateescape"))
                 .hexdigest())
    chosen = []
    rnd = 0
    while len(chosen) < n:
        for o in ops:
            if rnd < len(by_op[o]) and len(chosen) < n:
                chosen.append(by_op[o][rnd])
        rnd += 1
    return chosen


def diff_path(prefix, path):
    """A path in a diff header as git writes it: C-quoted when it holds a
    quote, a backslash or a control character; a trailing tab when it holds
    a space (so git apply reads the name to the end)."""
    name = prefix + path
    if any(c in '"\\' or ord(c) < 32 or ord(c) == 127 for c in name):
        esc = {"\"": '\\"', "\\": "\\\\", "\t": "\\t", "\n": "\\n"}
        name = '"%s"' % "".join(esc.get(c, "\\%03o" % ord(c) if ord(c) < 32 or ord(c) == 127
                                        else c) for c in name)
    return name + ("\t" if " " in path else "")


def hunk(lines, ln, new, path, ends_nl):
    """A git-style unified diff replacing line ln of lines by the list new;
    a file without a newline at its end gets git's marker after its last
    line, on the side (old, new or both) where that line is."""
    ctx = 3
    a0 = max(0, ln - ctx)
    a1 = min(len(lines), ln + 1 + ctx)
    old_block = lines[a0:a1]
    new_block = lines[a0:ln] + new + lines[ln + 1:a1]
    last = len(lines) - 1
    nonl = "\\ No newline at end of file"
    out = ["diff --git %s %s" % (diff_path("a/", path), diff_path("b/", path)),
           "--- " + diff_path("a/", path), "+++ " + diff_path("b/", path)]
    alen, blen = len(old_block), len(new_block)
    out.append("@@ -%d,%d +%d,%d @@" % (a0 + 1, alen, a0 + 1 if blen else a0, blen))
    for x in lines[a0:ln]:
        out.append(" " + x)
    out.append("-" + lines[ln])
    if ln == last and not ends_nl:
        out.append(nonl)
    for x in new:
        out.append("+" + x)
    if new and ln == last and not ends_nl:
        out.append(nonl)
    for x in lines[ln + 1:a1]:
        out.append(" " + x)
    if a1 - 1 > ln and a1 - 1 == last and not ends_nl:
        out.append(nonl)
    return "\n".join(out) + "\n"


# Settings of the user's or the repository's git config that would change
# what `git diff` prints (prefixes, colors, an external diff, quoted paths)
# are overridden: the parser reads exactly the format it knows.
GIT_CONFIG = ("-c", "core.quotePath=false", "-c", "diff.noprefix=false",
              "-c", "diff.mnemonicPrefix=false", "-c", "color.ui=never",
              "-c", "color.diff=never")


def git(repo, *args):
    """Git's output as text; bytes that are not UTF-8 are kept as surrogate
    escapes, so they are written back unchanged."""
    r = subprocess.run(["git", "-C", repo, *GIT_CONFIG] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if r.returncode != 0:
        err = r.stderr.decode(errors="replace").strip().splitlines()
        die("git %s: %s" % (" ".join(args), err[-1] if err else "exit %d" % r.returncode))
    return r.stdout.decode("utf-8", "surrogateescape")


def since_day(repo):
    head_t = int(git(repo, "log", "-1", "--format=%ct", "HEAD").strip())
    first = None
    for row in git(repo, "log", "--first-parent", "--format=%H %ct", "HEAD").splitlines():
        sha, t = row.split()
        if head_t - int(t) > 86400:
            break
        first = sha
    parents = git(repo, "log", "-1", "--format=%P", first).split()
    if not parents and git(repo, "rev-parse", "--is-shallow-repository").strip() == "true":
        die("--since-day: the clone is shallow and lacks the parent of %s "
            "(git fetch --deepen=50 gets it)" % first[:12])
    # the root commit's change is everything it adds: the diff from the empty tree
    base = parents[0] if parents else git(repo, "hash-object", "-t", "tree", "/dev/null").strip()
    return base, "HEAD"


def unquote_path(p):
    """A path from a diff header: C-quoted ("core/a\\tb.c", octal escapes of
    raw bytes) or plain, with the tab git adds after a name with a space."""
    if not p.startswith('"'):
        return p[:-1] if p.endswith("\t") else p
    m = re.match(r'^"((?:[^"\\]|\\.)*)"$', p)
    if not m:
        return None
    esc = {"a": b"\a", "b": b"\b", "f": b"\f", "n": b"\n", "r": b"\r", "t": b"\t",
           "v": b"\v", '"': b'"', "\\": b"\\"}
    raw, body, i = b"", m.group(1), 0
    while i < len(body):
        if body[i] != "\\":
            raw += body[i].encode("utf-8", "surrogateescape")
            i += 1
        elif re.match(r"[0-7]{3}", body[i + 1:i + 4]):
            raw += bytes([int(body[i + 1:i + 4], 8)])
            i += 4
        else:
            raw += esc.get(body[i + 1], body[i + 1].encode())
            i += 2
    return raw.decode("utf-8", "surrogateescape")


def is_product(path):
    return path.startswith(PRODUCT_DIRS) and path.endswith(PRODUCT_EXTS)


def changed_lines(repo, a, b):
    """{path: set of 0-based line numbers of b that the diff a..b adds}.
    Fails closed: the lines found per file must add up to git's own count
    (--numstat), so a diff this parser cannot read is an error, never
    "no change"."""
    # --text: a .gitattributes that calls product code binary hides nothing
    opts = ("--no-renames", "--no-ext-diff", "--no-textconv", "--no-color", "--text",
            "--diff-filter=AM", a, b, "--", *PRODUCT_DIRS)
    want, binary = {}, set()
    # the counts of the very diff read below: -U0 there, so -U0 here too
    # (git aligns some changes differently with other context, and then
    # counts one more or one less added line); -U0 adds the patch after
    # the records, past the empty one that ends them
    stat = git(repo, "diff", "--numstat", "-z", "-U0", *opts).split("\0\0", 1)[0]
    for row in stat.split("\0"):
        f = row.split("\t", 2)
        if len(f) == 3 and is_product(f[2]) and f[0] == "-":
            binary.add(f[2])  # no count (numstat ignores --text): the diff's word
        elif len(f) == 3 and is_product(f[2]) and int(f[0]) > 0:
            want[f[2]] = int(f[0])
    diff = git(repo, "diff", "-U0", "--src-prefix=a/", "--dst-prefix=b/", *opts)
    res, path = {}, None
    for row in diff.split("\n"):
        if row.startswith("+++ "):
            p = unquote_path(row[4:])
            path = p[2:] if p and p.startswith("b/") else None
            if path and not is_product(path):
                path = None
        elif row.startswith("@@") and path:
            m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", row)
            if not m:
                die("git diff %s..%s: cannot read the hunk header '%s' of %s" %
                    (a[:12], b[:12], row[:60], path))
            start, count = int(m.group(1)), int(m.group(2) or "1")
            res.setdefault(path, set()).update(range(start - 1, start - 1 + count))
    # a file whose hunks only take lines away adds none (numstat leaves it out)
    got = {p: len(s) for p, s in res.items() if p not in binary and s}
    if got != want:
        bad = sorted(set(got.items()) ^ set(want.items()))[0][0]
        die("git diff %s..%s: the added lines of %s do not match git's count (%d, not %d): "
            "the diff is in a format this parser cannot read" %
            (a[:12], b[:12], bad, got.get(bad, 0), want.get(bad, 0)))
    return res


def read_equivalents(path, given):
    """{id: reason}; a row without four fields or a reason is an error, and
    so is a file that cannot be read as UTF-8 text. Only the default file
    (not `given`) may be absent."""
    eq = {}
    if not given and not os.path.lexists(path):
        return eq
    try:
        with open(path, encoding="utf-8") as f:
            rows = f.read().split("\n")
    except (OSError, UnicodeDecodeError) as e:
        die("--equivalents %s: %s" % (path, e.strerror if isinstance(e, OSError)
                                      else "not UTF-8 text (byte %d)" % e.start))
    if True:
        for no, row in enumerate(rows, 1):
            if not row.strip() or row.startswith("#"):
                continue
            fields = row.split("\t")
            if len(fields) != 4 or not fields[3].strip():
                die("%s:%d: an equivalent survivor needs id, file:line, operator and a reason "
                    "(tab-separated); this row has %s" %
                    (path, no, "no reason" if len(fields) >= 3 else "%d field(s)" % len(fields)))
            if not re.match(r"^g[0-9a-f]{10}$", fields[0]):
                die("%s:%d: '%s' is not a generated mutant id (g + 10 hex digits)" %
                    (path, no, fields[0][:40]))
            eq[fields[0]] = fields[3].strip()
    return eq


def mutate_file(path, lines, changed, per_line):
    toks = tokenize(lines)
    func_ret = classify(toks)
    by_line = {}
    for k, t in enumerate(toks):
        by_line.setdefault(t.line, []).append(k)
    seen = {}
    res = []
    for ln in range(len(lines)):
        key = lines[ln].strip()
        occ = seen.get(key, 0)
        seen[key] = occ + 1
        if ln not in changed or ln not in by_line:
            continue
        cands = line_mutants(lines, ln, by_line[ln], toks, func_ret)
        func = next((toks[k].func for k in by_line[ln] if toks[k].func), None)
        for op, where, new in pick(distinct(cands), per_line, path + key + str(occ)):
            res.append((stable_id(path, key, op, where, occ), ln, op, new, func))
    return res


def distinct(cands):
    """The candidates with `where` told apart among identical ones on the
    line (the same swap in two identical calls): the second gets '#1', the
    third '#2' - a place among its twins, kept when the line moves."""
    seen, res = {}, []
    for op, where, new in cands:
        k = seen.get((op, where), 0)
        seen[(op, where)] = k + 1
        res.append((op, where + ("#%d" % k if k else ""), new))
    return res


class Parser(argparse.ArgumentParser):
    def error(self, message):
        die(message)  # one line, exit 2


def commit_of(repo, ref, what):
    """The commit a ref names; an unknown one is an error naming it."""
    if not ref or ref.startswith("-") or re.search(r"\s", ref):
        die("%s: '%s' is not a commit" % (what, ref[:80]))
    r = subprocess.run(["git", "-C", repo, "rev-parse", "--verify", "--quiet",
                        "--end-of-options", ref + "^{commit}"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        die("%s: '%s' is an unknown commit in %s" % (what, ref[:80], repo))
    return r.stdout.decode().strip()


def parse_range(rng):
    """A..B into (A, B); ref names may hold single dots and slashes
    (v1.0..origin/main), never '..' (git check-ref-format)."""
    parts = rng.split("..")
    if len(parts) != 2 or not parts[0] or not parts[1] or parts[1].startswith("."):
        die("--range needs A..B (two commits), not '%s'" % rng[:80])
    return parts[0], parts[1]


def clear_out(out):
    """Makes --out ready: a new folder, or one whose files are only this
    program's output (index.tsv and generated patches), which is removed;
    sub-folders (a runner's results: ci/test.sh) are left alone. A folder
    holding any other file (ci/mutants) is refused, not emptied."""
    if os.path.lexists(out) and not os.path.isdir(out):
        die("--out %s: not a folder" % out)
    try:
        os.makedirs(out, exist_ok=True)
        names = [f for f in os.listdir(out)
                 if os.path.islink(os.path.join(out, f)) or not os.path.isdir(os.path.join(out, f))]
        for f in names:
            p = os.path.join(out, f)
            ours = f == "index.tsv" and os.path.isfile(p)
            if f.endswith(".patch") and os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as fh:
                    ours = b"\n# generated: ci/mutgen.py " in fh.read(4096)
            if not ours:
                die("--out %s holds '%s', which ci/mutgen.py did not write: "
                    "give an empty or a new folder" % (out, f[:80]))
        for f in names:
            os.remove(os.path.join(out, f))
    except OSError as e:
        die("--out %s: %s" % (out, e.strerror))


def write_out(out, mutants, equivalents, rng, first=None):
    """<id>.patch per mutant and index.tsv; two mutants with one id are an
    error (a mutant's results are stored and marked by its id). With first,
    only the patches of the first that many ids in sorted order (a shell
    glob's order of their file names, which are [0-9a-z] of one length) are
    written; the index still lists every mutant."""
    ids = {}
    for m in mutants:
        if m[0] in ids:
            die("two mutants with the id %s: %s:%d (%s) and %s:%d (%s)" %
                (m[0], ids[m[0]][1], ids[m[0]][2] + 1, ids[m[0]][3], m[1], m[2] + 1, m[3]))
        ids[m[0]] = m
    clear_out(out)
    flat = lambda s: s.strip().replace("\t", " ")
    index = ["id\tfile\tline\toperator\toriginal\tmutated\tfunction"]
    keep = set(sorted(ids)[:first]) if first is not None else None
    for mid, path, ln, op, orig, new, patch, func in mutants:
        mutated = " / ".join(flat(x) for x in new) if new else "(line deleted)"
        index.append("\t".join((mid, path, str(ln + 1), op, flat(orig), mutated, func)))
        if keep is not None and mid not in keep:
            continue
        head = ["# mutant: " + mid, "# class: generated-" + op,
                "# breaks: %s:%d: %s -> %s" % (path, ln + 1, flat(orig), mutated),
                "# generated: ci/mutgen.py " + rng, "# file: " + path,
                "# line: %d" % (ln + 1), "# operator: " + op, "# original: " + flat(orig),
                "# mutated: " + mutated, "# function: " + func]
        head.append("# equivalent: " + equivalents[mid] if mid in equivalents
                    else "# expect: caught")
        with open(os.path.join(out, mid + ".patch"), "w", encoding="utf-8",
                  errors="surrogateescape", newline="") as f:
            f.write("\n".join(head) + "\n#\n" + patch)
    with open(os.path.join(out, "index.tsv"), "w", encoding="utf-8",
              errors="surrogateescape", newline="") as f:
        f.write("\n".join(index) + "\n")


def main():
    ap = Parser(add_help=True, usage=__doc__.split("Usage: ")[1].split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--range")
    g.add_argument("--since-day", action="store_true")
    ap.add_argument("--per-line", default="1")
    ap.add_argument("--out")
    ap.add_argument("--equivalents")
    ap.add_argument("--repo")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--first")
    args = ap.parse_args()
    if args.first is not None and not re.match(r"^[0-9]+$", args.first):
        die("--first needs a count >= 0, not '%s'" % args.first[:40])
    repo = args.repo or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not re.match(r"^[0-9]+$", args.per_line):
        die("--per-line needs a count >= 0, not '%s'" % args.per_line[:40])
    per_line = int(args.per_line)
    if args.range:
        a, b = parse_range(args.range)
    elif args.since_day:
        a, b = since_day(repo)
    else:
        die("give --range A..B or --since-day")
    a = commit_of(repo, a, "--range")
    b = commit_of(repo, b, "--range")
    eq_path = args.equivalents or os.path.join(repo, "ci", "mutgen-equivalent.tsv")
    equivalents = read_equivalents(eq_path, args.equivalents is not None)
    out = args.out or os.path.join(repo, "out", "mutgen")
    rng = "%s..%s" % (a[:12], b[:12])

    mutants = []
    for path, changed in sorted(changed_lines(repo, a, b).items()):
        content = git(repo, "show", "%s:%s" % (b, path))
        ends_nl = content.endswith("\n")
        lines = content.split("\n")
        if ends_nl:
            lines.pop()
        for mid, ln, op, new, func in mutate_file(path, lines, changed, per_line):
            patch = hunk(lines, ln, new, path, ends_nl)
            mutants.append((mid, path, ln, op, lines[ln], new, patch, func or "-"))
    counts = {}
    for m in mutants:
        counts[m[3]] = counts.get(m[3], 0) + 1
    summary = "mutgen: %d mutants of %s (per line %s): %s" % (
        len(mutants), rng, per_line or "all",
        ", ".join("%s %d" % (o, counts[o]) for o in OPERATORS if o in counts) or "none")
    if args.list:
        print(summary)
        return 0
    write_out(out, mutants, equivalents, rng,
              int(args.first) if args.first is not None else None)
    print(summary)
    print("mutgen: patches and index.tsv in %s" % out)
    return 0


def enclosing(lines, ln):
    """The function line ln (0-based) of lines is in, or None."""
    toks = tokenize(lines)
    classify(toks)
    return next((t.func for t in toks if t.line == ln and t.func), None)


def patch_place(patch, lines):
    """Line (0-based) of lines that a generated patch's removed line is at
    now, found as git apply finds it: the hunk's old side where it stands,
    the nearest match to the hunk's line; None when it is not there."""
    body = patch.split("\n")
    at = next((k for k, x in enumerate(body) if x.startswith("@@ -")), None)
    if at is None:
        return None
    start = int(re.match(r"@@ -(\d+)", body[at]).group(1)) - 1
    old, first = [], None
    for x in body[at + 1:]:
        if x[:1] in (" ", "-"):
            if x[0] == "-" and first is None:
                first = len(old)
            old.append(x[1:])
        elif x[:1] not in ("+", "\\"):
            break
    if first is None:
        return None
    hits = [k for k in range(len(lines) - len(old) + 1) if lines[k:k + len(old)] == old]
    if not hits:
        return None
    return min(hits, key=lambda k: abs(k - start)) + first


def function_main(args):
    """mutgen.py function --repo DIR PATCH...: for each generated patch,
    "ID<TAB>FUNCTION" of the function its line is in on DIR's files now
    (the header's may be stale: the code moved since the patch was made);
    "-" outside a function, "?" when the patch's place is not found."""
    if len(args) < 2 or args[0] != "--repo":
        die("usage: mutgen.py function --repo DIR PATCH...")
    repo, cache = args[1], {}
    for pf in args[2:]:
        try:
            with open(pf, encoding="utf-8", errors="surrogateescape", newline="") as f:
                patch = f.read()
        except OSError as e:
            die("%s: %s" % (pf, e.strerror))
        m = re.search(r"^# file: (.*)$", patch, re.M)
        func = "?"
        if m:
            path = os.path.join(repo, m.group(1))
            if path not in cache:
                try:
                    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
                        text = f.read()
                    lines = text.split("\n")
                    if text.endswith("\n"):
                        lines.pop()
                    cache[path] = lines
                except OSError:
                    cache[path] = None
            lines = cache[path]
            ln = patch_place(patch, lines) if lines is not None else None
            if ln is not None:
                func = enclosing(lines, ln) or "-"
        print("%s\t%s" % (os.path.basename(pf)[:-len(".patch")], func))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["function"]:
        sys.exit(function_main(sys.argv[2:]))
    sys.exit(main())
