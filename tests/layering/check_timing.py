#!/usr/bin/env python3
# check_timing.py - the check that no test asserts a wall-clock duration, a rate
# or a latency: tests never time anything, benchmarks do (STYLE.md "Tests").
#
#   check_timing.py ROOT    checks ROOT/tests/
#
# Benchmarks are exempt: files under tests/bench/ and files whose name starts
# with "bench"; so is tests/layering/, whose fixtures break the rules on purpose.  In every other test file (JavaScript, C, Python) it finds the
# assertions (assert..., expect(, check(, CHECK(, ok(, bar() and fails on any
# whose text
# - reads a clock (Date.now(), performance.now(), process.hrtime,
#   clock_gettime, time.time(), time.monotonic(), perf_counter), or
# - names a timing quantity (fps, frames/s, frames per second, latency,
#   realtime_ratio, tick_hz_actual, elapsed, per wall second), or
# - uses a name whose value was computed from a clock difference in the same
#   file (`const moved = Date.now() - t0`, `rate = n / ((Date.now() - t0) /
#   1000)`), followed through further assignments.
# A deadline (`until = Date.now() + 30000`, a wait's timeout) is not a
# measurement, and is allowed.  A line that must mention one of these words
# without timing anything (a unit test that feeds a pure function explicit
# timestamps) carries the marker "not-timed:" with the reason; they are counted.
# Closes with "check-timing: N passed, N failed" (tests/layering/verdict.py).

import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
import verdict  # noqa: E402

SOURCES = ('.mjs', '.js', '.c', '.h', '.py')
SKIP_DIRS = {'node_modules', 'corpus', 'crashes', 'bench'}
CLOCK = re.compile(r'Date\.now\(\)|performance\.now\(\)|process\.hrtime|clock_gettime|\btime\.time\(\)|'
                   r'\btime\.monotonic\(\)|perf_counter')
# A clock read minus something: an elapsed time (a deadline adds).
ELAPSED = re.compile(r'(Date\.now\(\)|performance\.now\(\)|process\.hrtime(\.bigint)?\([^)]*\)|time\.time\(\)|'
                     r'time\.monotonic\(\)|perf_counter\(\))\s*-')
WORDS = re.compile(r'\bfps\b|frames/s|frames per second|latency|realtime_ratio|tick_hz_actual|\belapsed\b|'
                   r'\bper wall\b', re.I)
ASSERT = re.compile(r'\b(assert\w*(\.\w+)?|expect|check|CHECK\w*|ok|bar)\s*\(')
ASSIGN = re.compile(r'(?:\b(?:const|let|var|double|float|int|long)\s+|^\s*|[,;(]\s*)([A-Za-z_]\w*)\s*=(?![=>])\s*([^;]+)')
MARK = 'not-timed:'


def test_files(root):
    base = os.path.join(root, 'tests')
    for d, dirs, files in os.walk(base):
        # tests/layering holds the checks and their fixtures (timed assertions on purpose)
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and os.path.join(d, x) != os.path.join(base, 'layering'))
        for f in sorted(files):
            if f.endswith(SOURCES) and not f.startswith('bench'):
                yield os.path.join(d, f)


def statements(lines, start):
    """The text of the call that opens on line `start`: lines joined until its
    parentheses close (at most 12 lines)."""
    text, depth = '', 0
    for i in range(start, min(start + 12, len(lines))):
        text += lines[i] + '\n'
        depth += lines[i].count('(') - lines[i].count(')')
        if depth <= 0:
            break
    return text


STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`(?:[^`\\]|\\.)*`")


def uses(name, text):
    """text names the variable `name` (not a property, an object key or a word in a string)."""
    return re.search(r'(?<![\w.$/])%s\b(?!\s*:)' % re.escape(name), STRING.sub("''", text)) is not None


def tainted_names(lines):
    """Names assigned from a clock difference, then from those names."""
    names = set()
    for _ in range(4):  # a few rounds follow chains of assignments
        before = len(names)
        for line in lines:
            for m in ASSIGN.finditer(line):
                name, rhs = m.group(1), m.group(2)
                if ELAPSED.search(rhs) or any(uses(n, rhs) for n in names):
                    names.add(name)
        if len(names) == before:
            break
    return names


def check_file(path, rel):
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    names = tainted_names(lines)
    bad, marked = [], 0
    for i, line in enumerate(lines):
        if not ASSERT.search(line) or line.lstrip().startswith(('//', '#', '*', '/*')):
            continue
        text = statements(lines, i)
        if MARK in text:
            marked += 1
            continue
        why = []
        if CLOCK.search(text):
            why.append('reads the clock')
        w = WORDS.search(text)
        if w:
            why.append('names a timing quantity (%s)' % w.group(0))
        hit = sorted(n for n in names if uses(n, text))
        if hit:
            why.append('uses %s, computed from a clock difference' % ', '.join(hit))
        if why:
            bad.append('%s:%d: an assertion %s: %s' % (rel, i + 1, ' and '.join(why), line.strip()[:120]))
    return bad, marked


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    bad, marked, n = [], 0, 0
    for path in test_files(root):
        b, m = check_file(path, os.path.relpath(path, root))
        bad += b
        marked += m
        n += 1
    print('check-timing: %d test files read (benchmarks exempt), %d assertions marked not-timed' % (n, marked))
    return verdict.report('check-timing', [('no test asserts a duration, a rate or a latency', bad)])


if __name__ == '__main__':
    sys.exit(main())
