#!/usr/bin/env python3
"""Commit citations in patch messages, in the form checkpatch's GIT_COMMIT_ID
wants, checked without the upstream history: checkpatch checks a citation
only when its id resolves, which it cannot in a tree made from a tarball.

  Fixes: <12 hex> ("<subject>")            on one line;
  commit <12-40 hex> ("<subject>")         "commit" and the id on one line,
                                           ("  on that line, ") on it or the next;
  a bare 12-40 hex id in the text           is an error (checkpatch wants the
                                           commit form above).

Usage: cite-check.py PATCH...; exit 1 when a citation is malformed.
"""
import re, sys
bad = 0
for p in sys.argv[1:]:
    msg = []
    with open(p, errors="replace") as f:
        inhdr = True
        for ln in f:
            ln = ln.rstrip("\n")
            if inhdr:
                if ln == "":
                    inhdr = False
                continue
            if ln == "---":
                break
            msg.append(ln)
    for i, ln in enumerate(msg):
        nxt = msg[i + 1] if i + 1 < len(msg) else ""
        if ln.startswith("Fixes:"):
            if not re.match(r'^Fixes: [0-9a-f]{12} \("[^"].*"\)$', ln):
                print('%s: "%s": not Fixes: <12 hex> ("<subject>") on one line' % (p, ln)); bad += 1
            continue
        if re.search(r"\bcommit\s*$", ln, re.I) and re.match(r"^\s*[0-9a-f]{7,}\b", nxt):
            print('%s: "%s" / "%s": "commit" and its id on two lines' % (p, ln, nxt)); bad += 1
        if not re.match(r"^\s*(?:Link|Patchwork|https?|BugLink|base-commit):", ln, re.I):
            for m in re.finditer(r"(?:\s|^)([0-9a-f]{12,40})(?=[\s\"'\(\[]|$)", ln):
                before = ln[:m.start(1)]
                prev = msg[i - 1] if i > 0 else ""
                if not (re.search(r"\bcommit\s+$", before, re.I) or
                        (before.strip() == "" and re.search(r"\bcommit\s*$", prev, re.I))):
                    print('%s: "%s": bare commit id %s (checkpatch wants commit <id> ("<subject>"))'
                          % (p, ln, m.group(1))); bad += 1
        for m in re.finditer(r"\bcommit\s+([0-9a-f]{5,})\b(.*)", ln, re.I):
            sha, rest = m.group(1), m.group(2)
            if not 12 <= len(sha) <= 40:
                print('%s: "%s": commit id of %d characters, not 12' % (p, ln, len(sha))); bad += 1
                continue
            if not rest.startswith(' ("'):
                print('%s: "%s": commit %s without (" on its line' % (p, ln, sha)); bad += 1
                continue
            if '")' not in rest and '")' not in nxt:
                print('%s: "%s": the subject of commit %s does not end on its line or the next' % (p, ln, sha)); bad += 1
sys.exit(1 if bad else 0)
