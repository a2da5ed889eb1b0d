# lex.py - a small tokenizer of C and JavaScript for the layering and shape
# checks: identifiers, numbers, punctuation with line numbers; comments are
# dropped, string / character / template / regex literals become one token
# each (their braces never count), and C preprocessor lines become one
# 'directive' token holding the line's text.  Not a parser: enough to match
# brackets and to tell a function body from a block or a table.

import re

MULTI = sorted(['>>>=', '===', '!==', '>>=', '<<=', '**=', '...', '=>', '==', '!=', '<=', '>=',
                '&&', '||', '??', '?.', '++', '--', '+=', '-=', '*=', '/=', '%=', '&=', '|=',
                '^=', '->', '<<', '>>', '**', '##'], key=len, reverse=True)
IDENT = re.compile(r'[A-Za-z_$][A-Za-z0-9_$]*')
NUMBER = re.compile(r'\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.])*')
# After these a '/' starts a regular expression (JavaScript), not a division.
REGEX_AFTER_KW = {'return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void',
                  'throw', 'case', 'do', 'else', 'yield', 'await'}


class Token:
    __slots__ = ('kind', 'text', 'line')

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line

    def __repr__(self):
        return 'Token(%s, %r, %d)' % (self.kind, self.text, self.line)


class LexError(Exception):
    pass


def _skip_quoted(src, i, quote):
    """i is just past the opening quote; returns the index just past the closing one.  A
    template (`) may span lines and holds ${ ... } expressions, skipped with their nesting."""
    n = len(src)
    while i < n:
        c = src[i]
        if c == '\\':
            i += 2
            continue
        if c == quote:
            return i + 1
        if quote == '`' and c == '$' and i + 1 < n and src[i + 1] == '{':
            i = _skip_js_braces(src, i + 2)
            continue
        if c == '\n' and quote != '`':
            return i  # unterminated: stop at the line end, as the compiler would complain
        i += 1
    return n


def _skip_js_braces(src, i):
    """Inside a template's ${: returns the index just past its closing brace."""
    depth, n = 1, len(src)
    while i < n:
        c = src[i]
        if c in '"\'':
            i = _skip_quoted(src, i + 1, c)
        elif c == '`':
            i = _skip_quoted(src, i + 1, '`')
        elif src.startswith('//', i):
            j = src.find('\n', i)
            i = n if j < 0 else j
        elif src.startswith('/*', i):
            j = src.find('*/', i + 2)
            i = n if j < 0 else j + 2
        elif c == '{':
            depth += 1
            i += 1
        elif c == '}':
            depth -= 1
            i += 1
            if depth == 0:
                return i
        else:
            i += 1
    return n


def _skip_regex(src, i):
    """i is just past the opening '/'; returns the index after the flags."""
    n, in_class = len(src), False
    while i < n:
        c = src[i]
        if c == '\\':
            i += 2
            continue
        if c == '\n':
            raise LexError('unterminated regular expression')
        if in_class:
            in_class = c != ']'
        elif c == '[':
            in_class = True
        elif c == '/':
            i += 1
            while i < n and (src[i].isalnum() or src[i] == '_'):
                i += 1
            return i
        i += 1
    return n


def _regex_allowed(prev):
    if prev is None:
        return True
    if prev.kind in ('ident',):
        return prev.text in REGEX_AFTER_KW
    if prev.kind in ('number', 'string', 'regex'):
        return False
    return prev.text not in (')', ']')


def tokenize(src, lang):
    """lang is 'c' or 'js'.  Returns a list of Token."""
    toks, i, n, line = [], 0, len(src), 1
    line_start = True  # only white space so far on this line (C directives)
    prev = None
    while i < n:
        c = src[i]
        if c == '\n':
            line += 1
            i += 1
            line_start = True
            continue
        if c in ' \t\r\f\v':
            i += 1
            continue
        if src.startswith('//', i):
            j = src.find('\n', i)
            i = n if j < 0 else j
            continue
        if src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
            line += src.count('\n', i, j)
            i = j
            continue
        start_line = line
        if lang == 'c' and c == '#' and line_start:
            j = i
            while True:
                k = src.find('\n', j)
                if k < 0:
                    k = n
                    break
                if src[k - 1] == '\\' or (src[k - 1] == '\r' and src[k - 2] == '\\'):
                    j = k + 1
                    continue
                break
            text = src[i:k]
            line += text.count('\n')
            toks.append(Token('directive', text, start_line))
            i = k
            continue
        line_start = False
        if c in '"\'':
            j = _skip_quoted(src, i + 1, c)
            tok = Token('string', src[i:j], start_line)
        elif c == '`' and lang == 'js':
            j = _skip_quoted(src, i + 1, '`')
            tok = Token('string', '`...`', start_line)
        elif c == '/' and lang == 'js' and _regex_allowed(prev):
            j = _skip_regex(src, i + 1)
            tok = Token('regex', src[i:j], start_line)
        else:
            m = IDENT.match(src, i)
            if m and not (lang == 'c' and c == '$'):
                j = m.end()
                tok = Token('ident', m.group(), start_line)
            else:
                m = NUMBER.match(src, i)
                if m:
                    j = m.end()
                    tok = Token('number', m.group(), start_line)
                else:
                    op = next((o for o in MULTI if src.startswith(o, i)), c)
                    j = i + len(op)
                    tok = Token('punct', op, start_line)
        line += src.count('\n', i, j)
        i = j
        toks.append(tok)
        prev = tok
    return toks
