#!/usr/bin/env python3
# check_history.py - the check that source comments, tests and the reference
# docs carry no change history (STYLE.md "Checks"): they say what the code does
# and why; the history of how it got there lives in docs/history/ and in the
# commit messages.
#
#   check_history.py ROOT    checks ROOT's sources and reference docs
#
# It fails, naming file:line and the text, on
# - a numbered period of work or an issue number ("session" or "issue" and a
#   number, "#" and a number after "issue", "issue" glued to a number, any case) in every text file under
#   server/, web-client/src/ and tests/, and in README.md, STYLE.md,
#   protocol/PROTOCOL.md and docs/*.md (the top level of docs/, not
#   docs/history/);
# - a date (2026-11-23) in the same files under server/, web-client/src/ and
#   tests/ except the README.md files of tests/ (measurement records, which may
#   carry the date of a measurement), and in README.md, STYLE.md,
#   protocol/PROTOCOL.md and the design documents docs/clavet-notes.md,
#   docs/sim-notes.md and docs/wire-v2.md.  An ISO timestamp
#   (2026-11-22T11:40:02Z, a log format's example) is not a date of the code's
#   history, and is allowed.
# Skipped: node_modules (npm packages), tests/fuzz/corpus (generated inputs),
# binary files, and tests/layering/, whose fixtures break the rule on purpose.
# The other measurement records (BENCHMARKS.md, docs/fuzzing.md,
# docs/hardening.md, docs/scale.md) may carry dates, not numbers.
# Closes with "check-history: N passed, N failed" (tests/layering/verdict.py).

import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
import verdict  # noqa: E402

NUMBER = re.compile(r'\bsessions? [0-9]+|\bissues? #?[0-9]+|\bissue[0-9]+', re.I)
DATE = re.compile(r'\b20[0-9]{2}-[0-9]{2}-[0-9]{2}\b(?!T)')

TREES = ('server', 'web-client/src', 'tests')
SKIP = {'tests/fuzz/corpus', 'tests/layering'}
DOCS_DATED = ('README.md', 'STYLE.md', 'protocol/PROTOCOL.md', 'docs/clavet-notes.md', 'docs/sim-notes.md',
              'docs/wire-v2.md')


def tree_files(root):
    """The files under TREES, as paths relative to root, less the skipped ones."""
    for top in TREES:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            rel_d = os.path.relpath(d, root).replace(os.sep, '/')
            dirs[:] = sorted(x for x in dirs if x != 'node_modules' and '%s/%s' % (rel_d, x) not in SKIP)
            for f in sorted(files):
                yield '%s/%s' % (rel_d, f)


def read_text(path):
    """The file's lines, or None for a binary file (a NUL byte or not UTF-8)."""
    with open(path, 'rb') as fh:
        data = fh.read()
    if b'\0' in data:
        return None
    try:
        return data.decode('utf-8').split('\n')
    except UnicodeDecodeError:
        return None


def targets(root):
    """(relative path, numbers checked, dates checked) for every file the rule covers."""
    for rel in tree_files(root):
        dated = not (rel.startswith('tests/') and os.path.basename(rel) == 'README.md')
        yield rel, True, dated
    docs = ['README.md', 'STYLE.md', 'protocol/PROTOCOL.md']
    docs_dir = os.path.join(root, 'docs')
    if os.path.isdir(docs_dir):
        docs += sorted('docs/' + f for f in os.listdir(docs_dir)
                       if f.endswith('.md') and os.path.isfile(os.path.join(docs_dir, f)))
    for rel in docs:
        if os.path.isfile(os.path.join(root, rel)):
            yield rel, True, rel in DOCS_DATED


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    numbers, dates, n, binary = [], [], 0, 0
    for rel, check_numbers, check_dates in targets(root):
        lines = read_text(os.path.join(root, rel))
        if lines is None:
            binary += 1
            continue
        n += 1
        for i, line in enumerate(lines):
            text = line.strip()[:120]
            if check_numbers:
                for m in NUMBER.finditer(line):
                    numbers.append('%s:%d: "%s": %s' % (rel, i + 1, m.group(0), text))
            if check_dates:
                for m in DATE.finditer(line):
                    dates.append('%s:%d: "%s": %s' % (rel, i + 1, m.group(0), text))
    print('check-history: %d text files read (%d binary skipped); history is docs/history/' % (n, binary))
    return verdict.report('check-history', [
        ('no session or issue number in sources, tests and the reference docs', numbers),
        ('no date in sources, tests and the design docs (measurement records aside)', dates),
    ])


if __name__ == '__main__':
    sys.exit(main())
