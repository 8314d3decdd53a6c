#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Systematic one-line mutation hunt for the allocator's KUnit suite.

kunit_check.sh runs a CURATED list of mutants (kunit-mutants.txt). This
script GENERATES every one-line mutant of the production code that the
suite builds on the host -- arch/arm64/lib/asid.c, arch/arm64/mm/context.c,
arch/arm64/kvm/vmid.c and arch/arm64/include/asm/asid.h (asid_kunit.c and
asid_trace.h are built but never mutated) -- builds each one exactly as
kunit_check.sh builds the suite, runs the runner and lists the survivors.

Build: the 6 files of KSRC (the working tree, or --rev REV through
`git show`, which a concurrent edit cannot disturb) and the runner with its
shim/ are copied ONCE into a work directory; the compiler flags, DEFS
and the list of objects (objs(), with the harness's own host-only suite
files such as kunit_host_init.c) are read from kunit_check.sh (built-in
copy if it cannot be parsed). kunit_host.c is compiled once; the base
objects are compiled with -Werror; a mutant recompiles only the objects
of its file (every object for a mutant of asm/asid.h), without -Werror as
in the gate, and relinks.

Operators (one change per mutant, in code only: comments and string
literals are masked; #include/#if/#else/#endif lines and the continuation
lines of multi-line macros are never mutated; #define bodies are):
  del     a complete statement inside a function is removed: a one-line
          one becomes `;`, a multi-line one gets `if (0) ` (or
          `if (1) ; else ` when an `else` follows) in front of its first
          line; declarations and `return <value>;` are not deleted
  ror     == <-> !=, < <-> <=, > <-> >=
  lcr     && <-> ||
  not     a unary ! is dropped
  cond    the condition of a one-line `if (...)` becomes 0 and 1
  const   an integer literal c becomes c+1 and c-1 (so 0 -> 1, 1 -> 0)
  bool    true <-> false
  bit     __set_bit <-> __clear_bit
  aor     binary + <-> -, += <-> -=
  incdec  ++ <-> --
Not mutated: the memory ordering of atomics (`_relaxed` and co.): the shim
makes every atomic relaxed, so such a mutant cannot be seen on the host;
orderings are checked by the herd7 litmus tests (Documentation/arch/
arm64/litmus/ and selftests/litmus/) and races by the TSan harness
(check.sh).

Each mutant is compiled first: one that does not compile or link is
STILLBORN (not killed); one whose objects are byte-identical to the base's
(code compiled out by the harness's config, or a change the compiler
folds away) is EQUIVALENT-OBJ and not run. The others are run with
KUNIT_NCPU=4, then, if nothing failed, KUNIT_NCPU=3 (CONFIGS), each run
with a wall-clock limit of TIMEOUT (60) s. KILLED: a KTAP "not ok" line, a
case skipped that the base run does not skip, or a runner crash (no
"# Totals" line, exit status other than 0/1). TIMEOUT: only hangs -- the
run exceeded TIMEOUT, or every failing case was ended by the runner's own
CPU/wall limits. Otherwise SURVIVED.

Output (OUT, default /tmp/hunt/out): summary.txt, results.tsv (every
mutant; in its fields a backslash, tab or newline is written \\\\, \\t, \\n),
survivors.txt (file:line, original line, mutated line),
mutants.tsv (the generated list), provenance.txt (KSRC, git commit, file
hashes, flags). Exit: 0 no survivor, 2 survivors, 1 setup error.

Usage: mutant_hunt.py [--only FILE] [--ids ID,..|@FILE] [--limit N]
                      [--list] [--rev REV] [--keep] [KSRC]
Env:   KSRC (default <repo>/build/linux), OUT, JOBS (default 1), TIMEOUT
       (default 60), CONFIGS (default "4,3"; items NCPU or NCPU:nokvm),
       CC (gcc), HARNESS (dir of kunit_host.c and shim/, default this
       script's), EXTRA (more KUnit suite files, linked into the runner
       like asid_kunit.c and rebuilt for a header mutant: to see which
       survivors a proposed case would kill), KUNIT_CASE_CPU_SECONDS (default 5 here) and
       KUNIT_CASE_WALL_SECONDS (default 30 here) for the runner.
Run it niced on a shared machine: nice -n 10 mutant_hunt.py
"""

import argparse
import atexit
import concurrent.futures
import datetime
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))

FILES = [
    "arch/arm64/lib/asid_kunit.c",
    "arch/arm64/lib/asid.c",
    "arch/arm64/mm/context.c",
    "arch/arm64/kvm/vmid.c",
    "arch/arm64/include/asm/asid.h",
    "arch/arm64/include/asm/asid_trace.h",
]
# production files that are mutated, as (path in KSRC, path in the work dir)
MUTATED = [
    ("arch/arm64/lib/asid.c", "asid.c"),
    ("arch/arm64/mm/context.c", "context.c"),
    ("arch/arm64/kvm/vmid.c", "vmid.c"),
    ("arch/arm64/include/asm/asid.h", "asm/asid.h"),
]
OBJS = ["asid_kunit", "asid", "context", "vmid"]
EXTRA_OBJS = []     # EXTRA: more suites, compiled and linked like asid_kunit

FALLBACK_DEFS = ("-DCONFIG_KUNIT -DCONFIG_KVM -DCONFIG_ARM64_DEBUG_ASID_ALIAS "
                 "-DCONFIG_ARM64_DEBUG_ASID_BITS -DASID_TEST_TLB_MODEL "
                 "-DNR_CPUS=8")
FALLBACK_CFLAGS = ("-O0 -g0 -Wall -Wno-unused-function "
                   "-Wno-format-zero-length $DEFS")


def die(msg):
    print("ERROR: " + msg, file=sys.stderr)
    sys.exit(1)


def wdpath(ksrc_path):
    """Where a KSRC file lives in a build dir (as kunit_check.sh copies)."""
    base = os.path.basename(ksrc_path)
    return "asm/" + base if "/asm/" in ksrc_path else base


def read_check_sh(check_sh):
    """From kunit_check.sh: its CFLAGS with $DEFS expanded, the objects
    its objs() builds, and where they came from."""
    try:
        text = open(check_sh).read()
        defs = re.search(r'^DEFS="([^"]*)"', text, re.M).group(1)
        cflags = re.search(r'^CFLAGS="([^"]*)"', text, re.M).group(1)
        src = check_sh
    except (OSError, AttributeError):
        text = ""
        defs, cflags, src = FALLBACK_DEFS, FALLBACK_CFLAGS, "built-in copy"
    cflags = cflags.replace("${DEFS}", defs).replace("$DEFS", defs)
    m = re.search(r"^objs\(\) \{.*?^\s*for s in ([\w ]+); do", text,
                  re.M | re.S)
    objs = m.group(1).split() if m else list(OBJS)
    if not set(OBJS) <= set(objs):
        objs = list(OBJS)
    return cflags.split(), objs, src


# ---------------------------------------------------------------- lexing --

def mask_source(lines):
    """Per line, the text with comments and string/char literal contents
    blanked (same length), and whether the line held only comment."""
    out, comment_only = [], []
    in_block = False
    for line in lines:
        m = list(line)
        i, n = 0, len(line)
        had_code = False
        had_comment = in_block
        while i < n:
            if in_block:
                j = line.find("*/", i)
                end = n if j < 0 else j + 2
                for k in range(i, end):
                    m[k] = " "
                if j >= 0:
                    in_block = False
                i = end
                continue
            c = line[i]
            if line.startswith("/*", i):
                in_block = True
                had_comment = True
                continue
            if line.startswith("//", i):
                for k in range(i, n):
                    m[k] = " "
                had_comment = True
                break
            if c in "\"'":
                q = c
                j = i + 1
                while j < n and line[j] != q:
                    j += 2 if line[j] == "\\" else 1
                for k in range(i + 1, min(j, n)):
                    m[k] = " "
                had_code = True
                i = j + 1
                continue
            if not c.isspace():
                had_code = True
            i += 1
        out.append("".join(m))
        comment_only.append(had_comment and not had_code)
    return out, comment_only


TOKEN_RE = re.compile(r"""
    (?P<id>[A-Za-z_]\w*)
  | (?P<num>0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*)
  | (?P<op><<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\|=|\^=|\.\.\.|[-+*/%<>=!~&|^?:;,.(){}\[\]\#\\])
""", re.X)


class Tok:
    __slots__ = ("line", "col", "end", "text", "kind")

    def __init__(self, line, col, end, text, kind):
        self.line, self.col, self.end = line, col, end
        self.text, self.kind = text, kind

    def __repr__(self):
        return "%d:%d %r" % (self.line + 1, self.col, self.text)


def tokenize_line(masked, lineno):
    toks = []
    pos = 0
    while True:
        m = TOKEN_RE.search(masked, pos)
        if not m:
            break
        toks.append(Tok(lineno, m.start(), m.end(), m.group(0), m.lastgroup))
        pos = m.end()
    return toks


CPP_COND = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)")
CPP_ANY = re.compile(r"^\s*#\s*(\w+)")
KEYWORDS_STMT_BAD = {"if", "else", "for", "while", "do", "switch", "case",
                     "default"}
CONTROL = {"if", "while", "for", "switch"}
NOT_A_TYPE = {"return", "goto", "else", "case", "break", "continue",
              "sizeof", "do", "if", "while", "for", "switch"}
DECL_RE = re.compile(r"^\s*([A-Za-z_]\w*)(\s+|\s*\*+\s*)\**\s*[A-Za-z_]\w*")


def is_declaration(text):
    m = DECL_RE.match(text)
    return bool(m) and m.group(1) not in NOT_A_TYPE


class SrcFile:
    """A production file: lines, masked lines, tokens, region tags,
    mutable lines and the statements inside functions."""

    def __init__(self, rel, text):
        self.rel = rel
        self.lines = text.split("\n")
        self.masked, self.comment_only = mask_source(self.lines)
        self.tags = [""] * len(self.lines)
        self.kind = ["code"] * len(self.lines)   # code|cpp|define|skip
        self.tokens = []          # code tokens (not preprocessor lines)
        self.define_tokens = []   # mutable tokens of #define bodies
        self._classify()
        self.statements = self._statements()

    def _classify(self):
        stack = []   # [directive text, in_else]
        cont = False
        for i, (line, mline) in enumerate(zip(self.lines, self.masked)):
            tags = []
            for cond, in_else in stack:
                for opt in re.findall(r"CONFIG_(ARM64_DEBUG_ASID_\w+|KUNIT)",
                                      cond):
                    neg = cond.lstrip().startswith("#if !") or \
                        "ifndef" in cond
                    tags.append(("!" if neg != in_else else "") + opt)
            self.tags[i] = ",".join(tags)
            if cont:
                self.kind[i] = "skip"
                cont = mline.rstrip().endswith("\\")
                continue
            m = CPP_ANY.match(mline)
            if m:
                d = m.group(1)
                cont = mline.rstrip().endswith("\\")
                mc = CPP_COND.match(mline)
                if mc:
                    if mc.group(1) in ("if", "ifdef", "ifndef"):
                        stack.append([mline.strip(), False])
                    elif mc.group(1) in ("else", "elif") and stack:
                        stack[-1][1] = True
                    elif mc.group(1) == "endif" and stack:
                        stack.pop()
                    self.kind[i] = "cpp"
                elif d == "define" and not cont:
                    self.kind[i] = "define"
                    toks = tokenize_line(mline, i)
                    # skip "#", "define", the name and a parameter list
                    j = 3
                    if (len(toks) > 3 and toks[3].text == "(" and
                            toks[3].col == toks[2].end):
                        while j < len(toks) and toks[j].text != ")":
                            j += 1
                        j += 1
                    self.define_tokens.extend(toks[j:])
                else:
                    self.kind[i] = "cpp"
                continue
            self.tokens.extend(tokenize_line(mline, i))

    def _statements(self):
        """Statements inside function bodies, as (first, last) token
        indices, with the index of the token after the last."""
        toks = self.tokens
        stmts = []
        braces = []          # "code" | "data"
        i, n = 0, len(toks)
        stmt_start = True

        def match_paren(k):
            depth = 0
            while k < n:
                if toks[k].text == "(":
                    depth += 1
                elif toks[k].text == ")":
                    depth -= 1
                    if depth == 0:
                        return k
                k += 1
            return n - 1

        while i < n:
            t = toks[i]
            tx = t.text
            if tx == "{":
                prev = toks[i - 1].text if i else ";"
                code = prev in (")", "else", "do", "{", "}", ";", ":") and \
                    (not braces or braces[-1] == "code" or prev == ")")
                if braces and braces[-1] == "data":
                    code = False
                braces.append("code" if code else "data")
                stmt_start = True
                i += 1
                continue
            if tx == "}":
                if braces:
                    braces.pop()
                stmt_start = True
                i += 1
                continue
            in_code = bool(braces) and braces[-1] == "code"
            if not stmt_start or not in_code:
                stmt_start = tx == ";"
                if tx == "(":
                    i = match_paren(i)
                i += 1
                continue
            # at the start of a statement inside a function body
            if tx in CONTROL or (t.kind == "id" and
                                 tx.startswith("for_each_") and
                                 i + 1 < n and toks[i + 1].text == "("):
                j = i + 1
                if j < n and toks[j].text == "(":
                    j = match_paren(j)
                i = j + 1
                stmt_start = True
                continue
            if tx in ("else", "do"):
                i += 1
                stmt_start = True
                continue
            if tx in ("case", "default") or (
                    t.kind == "id" and i + 1 < n and toks[i + 1].text == ":"
                    and tx not in NOT_A_TYPE):
                j = i
                while j < n and toks[j].text != ":":
                    j += 1
                i = j + 1
                stmt_start = True
                continue
            if tx == ";":       # empty statement
                i += 1
                continue
            # a simple statement: up to the ; at paren depth 0
            j, depth = i, 0
            while j < n:
                if toks[j].text in "([":
                    depth += 1
                elif toks[j].text in ")]":
                    depth -= 1
                elif toks[j].text == "{" and depth == 0:
                    break       # a declaration with an initialiser list
                elif toks[j].text == ";" and depth == 0:
                    break
                j += 1
            if j < n and toks[j].text == ";":
                stmts.append((i, j))
            i = j + 1
            stmt_start = True
        return stmts

    def mutable_line(self, i):
        s = self.masked[i].strip()
        if not s or self.comment_only[i]:
            return False
        if self.kind[i] in ("cpp", "skip"):
            return False
        if re.fullmatch(r"[{}();,\s]*", s):
            return False
        return True


# ------------------------------------------------------------- mutants --

class Mutant:
    __slots__ = ("id", "rel", "line", "op", "orig", "new", "tag", "desc")

    def __init__(self, rel, line, op, orig, new, tag, desc):
        self.rel, self.line, self.op = rel, line, op
        self.orig, self.new, self.tag, self.desc = orig, new, tag, desc
        self.id = None


def replace_span(line, col, end, new):
    return line[:col] + new + line[end:]


def literal_variants(text):
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)", text)
    if not m:
        return []
    body, suf = m.groups()
    if body[:2] in ("0x", "0X"):
        v = int(body, 16)
        fmt = lambda x: body[:2] + ("%x" % x if body[2:].islower() or
                                    not body[2:].isalpha() else "%X" % x)
    elif len(body) > 1 and body[0] == "0":
        return []               # octal: none in these files
    else:
        v = int(body)
        fmt = str
    out = [fmt(v + 1) + suf]
    if v >= 1:
        out.insert(0, fmt(v - 1) + suf)
    return out


SWAP = {"==": "!=", "!=": "==", "<": "<=", "<=": "<", ">": ">=",
        ">=": ">", "&&": "||", "||": "&&", "+=": "-=", "-=": "+=",
        "++": "--", "--": "++", "true": "false", "false": "true",
        "__set_bit": "__clear_bit", "__clear_bit": "__set_bit"}
OPNAME = {"==": "ror", "!=": "ror", "<": "ror", "<=": "ror", ">": "ror",
          ">=": "ror", "&&": "lcr", "||": "lcr", "+=": "aor", "-=": "aor",
          "++": "incdec", "--": "incdec", "true": "bool", "false": "bool",
          "__set_bit": "bit", "__clear_bit": "bit"}
OPERAND_END = ("id", "num")


def generate(sf):
    """All mutants of a SrcFile, in line order, deduplicated per line."""
    muts = []
    L = sf.lines
    tag = sf.tags

    def add(line, op, new, desc):
        if new != L[line] and sf.mutable_line(line):
            muts.append(Mutant(sf.rel, line + 1, op, L[line], new,
                               tag[line], desc))

    # statement deletion
    toks = sf.tokens
    for a, b in sf.statements:
        first, last = toks[a], toks[b]
        text = " ".join(t.text for t in toks[a:b + 1])
        if is_declaration(sf.masked[first.line][first.col:]):
            continue
        if first.text == "return" and toks[a + 1].text != ";":
            continue
        if first.line == last.line:
            new = replace_span(L[first.line], first.col, last.end, ";")
            add(first.line, "del", new, "delete: " + text)
        else:
            nxt = toks[b + 1].text if b + 1 < len(toks) else ""
            pre = "if (1) ; else " if nxt == "else" else "if (0) "
            new = replace_span(L[first.line], first.col, first.col, pre)
            add(first.line, "del", new, "delete (multi-line): " + text[:80])

    # token operators: code tokens and #define bodies
    all_toks = [t for t in sf.tokens] + sf.define_tokens
    by_line = {}
    for t in all_toks:
        by_line.setdefault(t.line, []).append(t)
    for ln in sorted(by_line):
        lt = by_line[ln]
        for k, t in enumerate(lt):
            prev = lt[k - 1] if k else None
            tx = t.text
            if tx in SWAP:
                op = OPNAME[tx]
                new = replace_span(L[ln], t.col, t.end, SWAP[tx])
                add(ln, op, new, "%s -> %s" % (tx, SWAP[tx]))
            elif tx in ("+", "-") and prev is not None and (
                    prev.kind in OPERAND_END and prev.text not in NOT_A_TYPE
                    or prev.text in (")", "]")):
                sw = "-" if tx == "+" else "+"
                new = replace_span(L[ln], t.col, t.end, sw)
                add(ln, "aor", new, "binary %s -> %s" % (tx, sw))
            elif tx == "!":
                new = replace_span(L[ln], t.col, t.end, "")
                add(ln, "not", new, "drop !")
            elif t.kind == "num":
                for v in literal_variants(tx):
                    new = replace_span(L[ln], t.col, t.end, v)
                    add(ln, "const", new, "%s -> %s" % (tx, v))
        # one-line if conditions -> 0 / 1
        for k, t in enumerate(lt):
            if t.text == "if" and k + 1 < len(lt) and lt[k + 1].text == "(":
                depth, j = 0, k + 1
                while j < len(lt):
                    if lt[j].text == "(":
                        depth += 1
                    elif lt[j].text == ")":
                        depth -= 1
                        if depth == 0:
                            break
                    j += 1
                if j < len(lt):
                    o, c = lt[k + 1], lt[j]
                    for v in ("0", "1"):
                        new = L[ln][:o.end] + v + L[ln][c.col:]
                        add(ln, "cond", new, "if (...) -> if (%s)" % v)

    # dedupe: same line, same mutated text
    seen, out = set(), []
    for m in sorted(muts, key=lambda m: m.line):
        key = (m.line, m.new)
        if key in seen:
            continue
        seen.add(key)
        out.append(m)
    per_line = {}
    for m in out:
        n = per_line.get(m.line, 0) + 1
        per_line[m.line] = n
        m.id = "%s:%d:%s%d" % (os.path.basename(m.rel), m.line, m.op, n)
    return out


# --------------------------------------------------------------- build --

class Builder:
    def __init__(self, work, harness, cc, cflags):
        self.work, self.harness, self.cc, self.cflags = work, harness, cc, cflags
        self.base = os.path.join(work, "base")
        self.shim = os.path.join(harness, "shim")

    def compile(self, d, src, werror=False):
        cmd = [self.cc] + self.cflags + (["-Werror"] if werror else []) + \
            ["-I.", "-I" + self.shim, "-c", src + ".c", "-o", src + ".o"]
        p = subprocess.run(cmd, cwd=d, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return p.returncode, p.stdout

    def link(self, d, objdirs):
        cmd = [self.cc, "-o", os.path.join(d, "kunit_host"),
               os.path.join(self.work, "kunit_host.o")] + \
            [os.path.join(objdirs[o], o + ".o") for o in OBJS + EXTRA_OBJS]
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return p.returncode, p.stdout

    def build_base(self):
        cmd = [self.cc] + self.cflags + ["-Werror", "-I" + self.shim, "-c",
                                         os.path.join(self.harness,
                                                      "kunit_host.c"),
                                         "-o", "kunit_host.o"]
        p = subprocess.run(cmd, cwd=self.work, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode:
            die("build of kunit_host.c failed:\n" + p.stdout)
        for o in OBJS + EXTRA_OBJS:
            rc, log = self.compile(self.base, o, werror=True)
            if rc:
                die("build of the suite failed (warnings are errors):\n" + log)
        rc, log = self.link(self.base,
                            {o: self.base for o in OBJS + EXTRA_OBJS})
        if rc:
            die("link failed:\n" + log)
        # an unmodified copy elsewhere must give identical objects, or the
        # equivalent-object shortcut is off
        d = os.path.join(self.work, "selfcheck")
        shutil.copytree(self.base, d, ignore=shutil.ignore_patterns(
            "*.o", "kunit_host"))
        same = True
        for o in OBJS + EXTRA_OBJS:
            rc, log = self.compile(d, o)
            same = same and rc == 0 and filecmp(os.path.join(d, o + ".o"),
                                                os.path.join(self.base,
                                                             o + ".o"))
        shutil.rmtree(d)
        return same


def filecmp(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


# ----------------------------------------------------------------- run --

NOT_OK = re.compile(r"^\s+not ok \d+ (\S+)", re.M)        # a case
SUITE_NOT_OK = re.compile(r"^not ok \d+ (\S+)", re.M)     # a suite
SKIP = re.compile(r"^\s*ok \d+ (\S+) # SKIP", re.M)
CASE_TIMEOUT = re.compile(r"^\s*# (\S+): TIMEOUT:", re.M)


def run_runner(binary, env_extra, timeout, outfile):
    """(status, detail): status ok|fail|crash|hang."""
    env = dict(os.environ)
    env.setdefault("KUNIT_CASE_CPU_SECONDS", "5")
    env.setdefault("KUNIT_CASE_WALL_SECONDS", "30")
    env.update(env_extra)
    t0 = time.time()
    with open(outfile, "w") as out, open(outfile + ".err", "w") as err:
        p = subprocess.Popen([binary], stdout=out, stderr=err, env=env,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
            return "hang", "no result in %d s" % timeout, time.time() - t0
    text = open(outfile, errors="replace").read()
    return classify_output(text, rc), None, time.time() - t0


def classify_output(text, rc):
    return {"rc": rc, "failing": NOT_OK.findall(text),
            "suite_not_ok": bool(SUITE_NOT_OK.search(text)),
            "skips": SKIP.findall(text),
            "timeouts": CASE_TIMEOUT.findall(text),
            "totals": "# Totals" in text}


def parse_configs(spec):
    cfgs = []
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        ncpu, _, flag = item.partition(":")
        env = {"KUNIT_NCPU": ncpu}
        name = "ncpu" + ncpu
        if flag == "nokvm":
            env["KUNIT_NO_KVM"] = "1"
            name += "-nokvm"
        elif flag:
            die("bad CONFIGS item %r" % item)
        cfgs.append((name, env))
    return cfgs


class Hunt:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.done = 0

    def judge(self, res, base_skips):
        """killed|timeout|survived and what killed it."""
        if res["rc"] not in (0, 1) or not res["totals"]:
            return "killed", "runner crash (rc=%s%s)" % (
                res["rc"], "" if res["totals"] else ", no # Totals")
        new_skips = [s for s in res["skips"] if s not in base_skips]
        failing = res["failing"]
        if failing:
            if all(c in res["timeouts"] for c in failing):
                return "timeout", "case time limit: " + " ".join(failing)
            return "killed", " ".join(failing)
        if res["suite_not_ok"]:
            return "killed", "suite not ok"
        if new_skips:
            return "killed", "skipped: " + " ".join(new_skips)
        return "survived", ""

    def run_one(self, m):
        a = self.args
        t0 = time.time()
        d = os.path.join(a.work, "m", m.id.replace(":", "_"))
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(a.base, d, ignore=shutil.ignore_patterns(
            "*.o", "kunit_host", "*.out", "*.err"))
        rel = dict(MUTATED)[m.rel]
        path = os.path.join(d, rel)
        lines = open(path).read().split("\n")
        if lines[m.line - 1] != m.orig:
            return self.finish(m, d, t0, "error", "line drifted", "")
        lines[m.line - 1] = m.new
        with open(path, "w") as f:
            f.write("\n".join(lines))
        if rel.startswith("asm/"):
            affected = OBJS + EXTRA_OBJS
        else:
            affected = [rel[:-2]]
        objdirs = {o: a.base for o in OBJS + EXTRA_OBJS}
        identical = True
        for o in affected:
            rc, log = a.builder.compile(d, o)
            if rc:
                err = next((l for l in log.splitlines() if "error" in l),
                           log.strip().splitlines()[0] if log.strip()
                           else "?")
                return self.finish(m, d, t0, "stillborn", err.strip(), "")
            objdirs[o] = d
            if a.identity and not filecmp(os.path.join(d, o + ".o"),
                                          os.path.join(a.base, o + ".o")):
                identical = False
        if a.identity and identical:
            return self.finish(m, d, t0, "equivalent-obj",
                               "objects identical to the base's", "")
        rc, log = a.builder.link(d, objdirs)
        if rc:
            return self.finish(m, d, t0, "stillborn",
                               "link: " + log.strip().splitlines()[0], "")
        status, why, where = "survived", "", ""
        for name, env in a.configs:
            st, detail, _ = run_runner(os.path.join(d, "kunit_host"), env,
                                       a.timeout,
                                       os.path.join(d, name + ".out"))
            if st == "hang":
                status, why, where = "timeout", detail, name
                break
            status, why = self.judge(st, a.base_skips[name])
            if status != "survived":
                where = name
                break
        return self.finish(m, d, t0, status, why, where)

    def finish(self, m, d, t0, status, why, where):
        dt = time.time() - t0
        if not self.args.keep and status in ("killed", "equivalent-obj",
                                             "timeout"):
            shutil.rmtree(d, ignore_errors=True)
        with self.lock:
            self.done += 1
            n = self.done
        if not self.args.quiet:
            print("[%4d/%d] %-28s %-14s %5.1fs %s" % (
                n, self.args.total, m.id, status, dt, why[:70]), flush=True)
        return (m, status, why, where, dt)


def git(ksrc, *args):
    p = subprocess.run(["git", "-C", ksrc] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def tsv(s):
    """A TSV field: backslash, tab and newline escaped as \\\\, \\t, \\n."""
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def main():
    ap = argparse.ArgumentParser(
        description="one-line mutation hunt for the allocator's KUnit suite",
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ksrc", nargs="?",
                    default=os.environ.get("KSRC",
                                           os.path.join(TOP, "build/linux")))
    ap.add_argument("--only", action="append", default=[],
                    help="mutate only FILE (asid.c, context.c, vmid.c, "
                    "asid.h or a path ending so); repeatable")
    ap.add_argument("--ids", help="run only these mutant ids: a comma "
                    "separated list, or @FILE with one id per line (first "
                    "column, e.g. a survivors' results.tsv)")
    ap.add_argument("--limit", type=int, default=0,
                    help="run only the first N mutants (after --only)")
    ap.add_argument("--list", action="store_true",
                    help="print the mutants and exit")
    ap.add_argument("--rev", help="take the files from this git revision "
                    "of KSRC (git show) instead of its working tree")
    ap.add_argument("--keep", action="store_true",
                    help="keep the work directory (and every mutant's)")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()

    ksrc = os.path.abspath(a.ksrc)
    a.out = os.environ.get("OUT", "/tmp/hunt/out")
    a.jobs = int(os.environ.get("JOBS", "1"))
    a.timeout = int(os.environ.get("TIMEOUT", "60"))
    a.configs = parse_configs(os.environ.get("CONFIGS", "4,3"))
    cc = os.environ.get("CC", "gcc")
    harness = os.path.abspath(os.environ.get("HARNESS", HERE))
    if not os.path.isdir(os.path.join(ksrc, "arch/arm64")) and not a.rev:
        die("KSRC=%s is not a kernel tree" % ksrc)

    # ---- snapshot the sources (once) ----
    t_start = time.time()
    texts = {}
    commit = git(ksrc, "rev-parse", a.rev or "HEAD")
    if a.rev:
        if not commit:
            die("cannot resolve %s in %s" % (a.rev, ksrc))
        for f in FILES:
            p = subprocess.run(["git", "-C", ksrc, "show", commit + ":" + f],
                               stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
            if p.returncode:
                die("%s:%s missing (series not applied?)" % (commit, f))
            texts[f] = p.stdout.decode()
        origin = "git show %s" % commit
    else:
        for f in FILES:
            try:
                texts[f] = open(os.path.join(ksrc, f)).read()
            except OSError:
                die("%s/%s missing (series not applied?)" % (ksrc, f))
        dirty = git(ksrc, "status", "--porcelain", "--", *FILES)
        origin = "working tree, HEAD %s%s" % (
            commit or "(not a git tree)",
            ", files MODIFIED against HEAD:\n" + dirty if dirty else
            ", files as in HEAD" if dirty == "" else "")
    if "kvm_arm_vmid_init_info" not in texts["arch/arm64/kvm/vmid.c"]:
        die("vmid.c has no kvm_arm_vmid_init_info(): not the series' allocator")

    # ---- mutants ----
    muts = []
    for path, rel in MUTATED:
        if a.only and not any(path.endswith(o) or rel.endswith(o) or
                              os.path.basename(path) == o for o in a.only):
            continue
        muts.extend(generate(SrcFile(path, texts[path])))
    if a.only and not muts:
        die("--only %s matches no mutated file (%s)" % (
            " ".join(a.only), ", ".join(r for _, r in MUTATED)))
    if a.ids:
        if a.ids.startswith("@"):
            want = [l.split("\t")[0].strip() for l in open(a.ids[1:])]
        else:
            want = a.ids.split(",")
        want = {w for w in want if w and w != "id"}
        unknown = want - {m.id for m in muts}
        if unknown:
            die("unknown mutant ids (source changed?): %s" %
                " ".join(sorted(unknown)))
        muts = [m for m in muts if m.id in want]
    if a.limit:
        muts = muts[:a.limit]
    if a.list:
        for m in muts:
            print("%s\t%s\t%s\n\t- %s\n\t+ %s" % (
                m.id, m.tag or "-", m.desc, m.orig.strip(), m.new.strip()))
        print("%d mutants" % len(muts))
        return 0
    if not muts:
        die("no mutants")

    # ---- work dir and base build ----
    os.makedirs(a.out, exist_ok=True)
    a.work = tempfile.mkdtemp(prefix="mutant-hunt.",
                              dir=os.environ.get("TMPDIR", "/tmp"))
    if not a.keep:      # also on die()
        atexit.register(shutil.rmtree, a.work, ignore_errors=True)
    a.base = os.path.join(a.work, "base")
    os.makedirs(os.path.join(a.base, "asm"))
    for f in FILES:
        with open(os.path.join(a.base, wdpath(f)), "w") as fh:
            fh.write(texts[f])
    for i, e in enumerate(x for x in os.environ.get("EXTRA", "").split()
                          if x):
        name = "extra%d" % i
        try:
            shutil.copy(e, os.path.join(a.base, name + ".c"))
        except OSError as err:
            die("EXTRA: %s" % err)
        EXTRA_OBJS.append(name)
    # the runner and shim too: they may change while we run
    hcopy = os.path.join(a.work, "harness")
    os.makedirs(hcopy)
    shutil.copy(os.path.join(harness, "kunit_host.c"), hcopy)
    shutil.copytree(os.path.join(harness, "shim"),
                    os.path.join(hcopy, "shim"))
    cflags, objs, flags_from = read_check_sh(os.path.join(harness,
                                                          "kunit_check.sh"))
    # objects of the harness's own (kunit_check.sh copies HERE/<name>.c)
    for o in objs:
        if o not in OBJS:
            try:
                shutil.copy(os.path.join(harness, o + ".c"), a.base)
            except OSError:
                die("kunit_check.sh builds %s.c, not in %s" % (o, harness))
            EXTRA_OBJS.insert(0, o)
    a.builder = Builder(a.work, hcopy, cc, cflags)
    a.identity = a.builder.build_base()
    a.base_skips = {}
    for name, env in a.configs:
        st, detail, dt = run_runner(os.path.join(a.base, "kunit_host"), env,
                                    a.timeout,
                                    os.path.join(a.work, "base-%s.out" % name))
        if st == "hang" or st["failing"] or st["rc"] not in (0, 1) or \
                not st["totals"]:
            die("the unmutated suite fails with %s: %s" % (
                name, detail or st))
        a.base_skips[name] = st["skips"]
    t_base = time.time() - t_start

    prov = [
        "date: %s" % datetime.datetime.now().isoformat(timespec="seconds"),
        "KSRC: %s" % ksrc,
        "sources: %s" % origin,
        "harness: %s (kunit_host.c and shim/ copied at start)" % harness,
        "flags (from %s): %s" % (flags_from, " ".join(cflags)),
        "objects: %s" % " ".join(OBJS + EXTRA_OBJS),
        "extra suites: %s" % (os.environ.get("EXTRA") or "none"),
        "configs: %s; timeout %d s per run; JOBS=%d" % (
            " then ".join(n for n, _ in a.configs), a.timeout, a.jobs),
        "runner limits: KUNIT_CASE_CPU_SECONDS=%s KUNIT_CASE_WALL_SECONDS=%s"
        % (os.environ.get("KUNIT_CASE_CPU_SECONDS", "5"),
           os.environ.get("KUNIT_CASE_WALL_SECONDS", "30")),
        "equivalent-object check: %s" % ("on" if a.identity else
                                         "OFF (objects not reproducible)"),
        "files:",
    ] + ["  %s  %s" % (hashlib.sha256(texts[f].encode()).hexdigest()[:16], f)
         for f in FILES]
    with open(os.path.join(a.out, "provenance.txt"), "w") as f:
        f.write("\n".join(prov) + "\n")
    with open(os.path.join(a.out, "mutants.tsv"), "w") as f:
        f.write("id\tfile\tline\top\tregion\tdescription\toriginal\tmutated\n")
        for m in muts:
            f.write("\t".join(tsv(x) for x in (
                m.id, m.rel, str(m.line), m.op, m.tag, m.desc, m.orig,
                m.new)) + "\n")
    print("\n".join(prov[:3] + prov[5:8]))
    print("base build + runs: %.1f s; %d mutants" % (t_base, len(muts)))

    # ---- run ----
    a.total = len(muts)
    hunt = Hunt(a)
    t0 = time.time()
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(hunt.run_one, m): m for m in muts}
        for fu in concurrent.futures.as_completed(futs):
            m = futs[fu]
            try:
                results[m.id] = fu.result()
            except Exception as e:      # a bug of this script, not a result
                results[m.id] = (m, "error", repr(e), "", 0.0)
    t_run = time.time() - t0

    # ---- report ----
    order = [results[m.id] for m in muts]
    counts = {}
    for r in order:
        counts[r[1]] = counts.get(r[1], 0) + 1
    with open(os.path.join(a.out, "results.tsv"), "w") as f:
        f.write("id\tfile\tline\top\tregion\tstatus\tdetail\tconfig\t"
                "seconds\toriginal\tmutated\n")
        for m, st, why, where, dt in order:
            f.write("\t".join(tsv(x) for x in (
                m.id, m.rel, str(m.line), m.op, m.tag, st, why, where,
                "%.2f" % dt, m.orig, m.new)) + "\n")
    surv = [r for r in order if r[1] == "survived"]
    with open(os.path.join(a.out, "survivors.txt"), "w") as f:
        for m, st, why, where, dt in surv:
            f.write("%s:%d  [%s]%s  %s\n  - %s\n  + %s\n\n" % (
                m.rel, m.line, m.id, " {" + m.tag + "}" if m.tag else "",
                m.desc, m.orig.strip(), m.new.strip()))
    summary = [
        "total %d: killed %d, survived %d, stillborn %d, timeout %d, "
        "equivalent-obj %d%s" % (
            len(order), counts.get("killed", 0), counts.get("survived", 0),
            counts.get("stillborn", 0), counts.get("timeout", 0),
            counts.get("equivalent-obj", 0),
            ", ERRORS %d" % counts["error"] if counts.get("error") else ""),
        "time: base %.1f s, mutants %.1f s (JOBS=%d)" % (t_base, t_run,
                                                         a.jobs),
    ]
    by_file = {}
    for m, st, *_ in order:
        by_file.setdefault(m.rel, {}).setdefault(st, 0)
        by_file[m.rel][st] += 1
    for rel, c in by_file.items():
        summary.append("  %-32s %s" % (rel, ", ".join(
            "%s %d" % kv for kv in sorted(c.items()))))
    if surv:
        summary.append("survivors (%d):" % len(surv))
        for m, *_ in surv:
            summary.append("  %-26s %-28s %s" % (
                "%s:%d" % (os.path.basename(m.rel), m.line),
                m.tag or "-", m.desc[:60]))
    with open(os.path.join(a.out, "summary.txt"), "w") as f:
        f.write("\n".join(summary) + "\n")
    print("\n" + "\n".join(summary))
    print("results in %s" % a.out)
    if a.keep:
        print("work dir kept: %s" % a.work)
    if counts.get("error"):
        return 1
    return 2 if surv else 0


if __name__ == "__main__":
    sys.exit(main())
