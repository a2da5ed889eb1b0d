#!/usr/bin/env python3
# check_shape.py - the shape checks (STYLE.md "Checks"): no
# function in server/**/*.c or web-client/src/**/*.js longer than 150 lines,
# data tables aside, and every file of server/ (.c, .h) and web-client/src/
# (.js) opens with a comment that names it and says what it is.
#
#   check_shape.py ROOT [--max-lines 150]
#
# Prints each offender as file:line, and a closing
# "check-shape: N passed, N failed"; exits 1 if any check failed.
#
# How a function is measured: from the line of its name (C, JS function
# declarations and methods), or of its parameter list (JS arrow and anonymous
# functions), to the line of its closing brace, both included.  A nested JS
# function counts in its own length and in the enclosing one's.  Data tables
# aside: the lines of a data literal inside a function do not count - in C a
# `static` array or struct initialised with `= { ... }`, in JavaScript an
# object or array literal (`{ ... }` or `[ ... ]` as a value) with no function
# inside it; only the literal's first line counts.  A table outside any
# function (a file-level `static const x[] = { ... }`, `const T = { ... }`) is
# not a function at all.

import argparse
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lex  # noqa: E402
import verdict  # noqa: E402

CONTROL = {'if', 'for', 'while', 'switch', 'catch', 'with', 'return', 'typeof', 'sizeof',
           '_Alignof', '_Generic', 'defined'}
# After these tokens a JavaScript '{' or '[' opens a literal (a value), not a block.
VALUE_BEFORE = {'=', '(', ',', ':', '[', '?', '||', '&&', '??', '!', '+', '-', '*', '/',
                '%', '<', '>', '==', '===', '!=', '!==', '<=', '>=', '...', '+=', '-=', '||=', '&&=',
                '??=', 'return', 'yield', 'await', 'typeof', 'case', 'in', 'of', 'new', 'void',
                'delete', 'throw', 'default', 'else'}


class Frame:
    __slots__ = ('kind', 'name', 'start', 'open_line', 'data', 'pure')

    def __init__(self, kind, name=None, start=0, open_line=0):
        self.kind = kind  # 'func', 'data' (a literal that may be a table), 'block'
        self.name, self.start, self.open_line = name, start, open_line
        self.data = 0  # lines of tables found inside, not counted
        self.pure = True  # (data) no function inside


def _match_back(toks, k):
    """toks[k] is ')': the index of its '('."""
    depth = 0
    for j in range(k, -1, -1):
        t = toks[j].text if toks[j].kind == 'punct' else None
        if t == ')':
            depth += 1
        elif t == '(':
            depth -= 1
            if depth == 0:
                return j
    return -1


def _stmt_has_static(toks, k):
    for j in range(k - 1, -1, -1):
        t = toks[j]
        if t.kind == 'punct' and t.text in (';', '{', '}'):
            return False
        if t.kind == 'ident' and t.text == 'static':
            return True
    return False


def classify_c(toks, k, depth):
    """toks[k] is '{': returns a Frame."""
    prev = toks[k - 1] if k else None
    line = toks[k].line
    if depth == 0 and prev is not None and prev.text == ')':
        j = _match_back(toks, k - 1)
        if j > 0 and toks[j - 1].kind == 'ident' and toks[j - 1].text not in CONTROL:
            return Frame('func', toks[j - 1].text, toks[j - 1].line, line)
    if depth > 0 and prev is not None and prev.text == '=' and _stmt_has_static(toks, k):
        return Frame('data', None, line, line)
    return Frame('block', None, line, line)


def _function_name(toks, j):
    """toks[j] is the '(' of a parameter list; the function's name and start line, or None if
    the parentheses are not a function's (if, for, a call...)."""
    if j <= 0:
        return None
    b = toks[j - 1]
    if b.kind == 'ident':
        if b.text in CONTROL:
            return None
        if b.text == 'function':
            return ('<anonymous>', b.line)
        before = toks[j - 2] if j >= 2 else None
        if before is not None and before.text == '*':
            before = toks[j - 3] if j >= 3 else None
        if before is not None and before.text == 'function':
            return (b.text, before.line)
        return (b.text, b.line)  # a method: name(...) {
    if b.text == ']':  # a computed method name: [expr](...) {
        return ('[computed]', b.line)
    if b.text == '*' and j >= 2 and toks[j - 2].text == 'function':
        return ('<anonymous>', toks[j - 2].line)
    return None


def classify_js(toks, k, arrow_start):
    prev = toks[k - 1] if k else None
    line = toks[k].line
    opener = toks[k].text
    if opener == '{' and prev is not None:
        if prev.text == '=>' and prev.kind == 'punct':
            return Frame('func', '<arrow>', arrow_start.get(k - 1, prev.line), line)
        if prev.text == ')' and prev.kind == 'punct':
            j = _match_back(toks, k - 1)
            named = _function_name(toks, j)
            if named:
                return Frame('func', named[0], named[1], line)
            return Frame('block', None, line, line)
    if prev is None:
        return Frame('block', None, line, line)
    value = (prev.kind == 'punct' and prev.text in VALUE_BEFORE) or \
            (prev.kind == 'ident' and prev.text in VALUE_BEFORE)
    if opener == '[':
        return Frame('data' if value or prev.text in ('{', ';', '}') else 'block', None, line, line)
    return Frame('data' if value else 'block', None, line, line)


def arrow_starts(toks):
    """index of each '=>' -> the line where its parameters start."""
    out = {}
    for k, t in enumerate(toks):
        if t.kind == 'punct' and t.text == '=>' and k:
            p = toks[k - 1]
            if p.text == ')':
                j = _match_back(toks, k - 1)
                out[k] = toks[j].line if j >= 0 else p.line
            else:
                out[k] = p.line
    return out


def functions(path, lang):
    """[(name, start line, length)] of every function in the file, or raises lex.LexError."""
    with open(path, encoding='utf-8', errors='replace') as fh:
        toks = lex.tokenize(fh.read(), lang)
    toks = [t for t in toks if t.kind != 'directive']
    arrows = arrow_starts(toks) if lang == 'js' else {}
    stack, out = [], []
    pairs = {'}': '{', ']': '[', ')': '('}
    for k, t in enumerate(toks):
        if t.kind != 'punct':
            continue
        if t.text == '(':
            stack.append((t.text, None))
        elif t.text == '{' or (t.text == '[' and lang == 'js'):
            depth = sum(1 for s in stack if s[0] == '{')
            fr = classify_c(toks, k, depth) if lang == 'c' else classify_js(toks, k, arrows)
            stack.append((t.text, fr))
        elif t.text == '[':
            stack.append((t.text, None))
        elif t.text in pairs:
            if not stack or stack[-1][0] != pairs[t.text]:
                raise lex.LexError('line %d: unbalanced %r' % (t.line, t.text))
            _, fr = stack.pop()
            if fr is None:
                continue
            parent = next((s[1] for s in reversed(stack) if s[1] is not None), None)
            if fr.kind == 'func':
                out.append((fr.name, fr.start, t.line - fr.start + 1 - fr.data))
                carry = fr.data
                # a literal holding a function is code, not a table
                for s in stack:
                    if s[1] is not None and s[1].kind == 'data':
                        s[1].pure = False
            elif fr.kind == 'data' and fr.pure:
                carry = t.line - fr.open_line
            else:
                carry = fr.data
            if parent is not None:
                parent.data += carry
    if stack:
        raise lex.LexError('line %d: %r never closed' % (toks[-1].line if toks else 0, stack[-1][0]))
    return out


def first_line_ok(path):
    """None if the file's first line is a comment naming it and saying what it is, else why not."""
    name = os.path.basename(path)
    with open(path, encoding='utf-8', errors='replace') as fh:
        first = fh.readline().rstrip('\n')
    opener = r'(?:/\*|//)' if name.endswith('.js') else r'/\*'
    m = re.match(opener + r'\s*(\S+)\s+-\s+(.*)$', first)
    if not m:
        want = '// %s - what it is' % name if name.endswith('.js') else '/* %s - what it is' % name
        return 'the first line is not a comment "%s": %r' % (want, first[:80])
    if m.group(1) != name:
        return 'the first line names %s, not %s' % (m.group(1), name)
    what = m.group(2).strip().rstrip('*/').strip()
    if not what or re.fullmatch(r'see \S+\.?', what):
        return 'the first line does not say what the file is: %r' % first[:80]
    return None


def walk(root, top, exts):
    out = []
    for d, dirs, names in os.walk(os.path.join(root, top)):
        dirs[:] = sorted(x for x in dirs if x not in ('node_modules', 'vendor') and not x.startswith('.'))
        out += [os.path.join(d, n) for n in sorted(names) if n.endswith(exts)]
    return out


def main():
    ap = argparse.ArgumentParser(description='function lengths and first-line comments')
    ap.add_argument('root')
    ap.add_argument('--max-lines', type=int, default=150)
    ap.add_argument('--list', action='store_true', help='print every function longer than 100 lines')
    args = ap.parse_args()
    root = args.root
    long_fns, heads, errors = [], [], []
    sources = [(p, 'c') for p in walk(root, 'server', ('.c',))] + \
              [(p, 'js') for p in walk(root, 'web-client/src', ('.js',))]
    longest = (0, '')
    for path, lang in sources:
        rel = os.path.relpath(path, root)
        try:
            fns = functions(path, lang)
        except lex.LexError as e:
            errors.append('%s: cannot be read as %s: %s' % (rel, 'C' if lang == 'c' else 'JavaScript', e))
            continue
        for name, line, n in fns:
            longest = max(longest, (n, '%s:%d %s' % (rel, line, name)))
            if n > args.max_lines or (args.list and n > 100):
                long_fns.append((n, '%s:%d: %s is %d lines' % (rel, line, name, n)))
    for path in walk(root, 'server', ('.c', '.h')) + walk(root, 'web-client/src', ('.js',)):
        why = first_line_ok(path)
        if why:
            heads.append('%s:1: %s' % (os.path.relpath(path, root), why))
    over = [m for n, m in sorted(long_fns, reverse=True) if n > args.max_lines]
    if args.list:
        for n, m in sorted(long_fns, reverse=True):
            print('  ' + m)
    print('longest function: %d lines (%s)' % longest)
    checks = [('every file can be read', errors),
              ('no function longer than %d lines (data tables aside)' % args.max_lines, over),
              ('every file opens with a comment naming it and saying what it is', heads)]
    return verdict.report('check-shape', checks)


if __name__ == '__main__':
    sys.exit(main())
