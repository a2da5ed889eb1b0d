#!/usr/bin/env python3
# check_layers.py - the layering check of server/ (STYLE.md "Layers"):
# the core includes nothing of the network, JSON or msgpack; only server/net/
# includes libwebsockets; each folder includes only the folders below it (the
# LAYERS table); no two modules include each other's headers in a circle; and,
# given the object files, no two files call each other in a circle.
#
#   check_layers.py ROOT [--objects FILE.o ...]
#
# Prints what it finds and a closing "check-layers: N passed, N failed"; exits
# 1 if any check failed.  Includes are resolved as the compiler does: a quoted
# include next to the including file first, then the -I folders (server/ and
# every folder under it that holds a header, found in the tree).

import argparse
import fnmatch
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lex  # noqa: E402
import verdict  # noqa: E402

# The one table of allowed dependencies between the folders of server/
# (a folder may always include its own headers).  'main.c' is server/main.c.
LAYERS = {
    'base': (),
    'sim': (),
    'hub': ('base', 'sim'),
    'wire': ('hub', 'base', 'sim'),
    'loop': ('wire', 'hub', 'base', 'sim'),
    'rooms': ('loop', 'wire', 'hub', 'base', 'sim'),
    'net': ('rooms', 'wire', 'hub', 'base', 'sim'),
    'bus': ('rooms', 'wire', 'hub', 'base', 'sim'),
    'fleet': ('rooms', 'bus', 'wire', 'hub', 'base', 'sim'),
    'main.c': ('base', 'sim', 'hub', 'wire', 'loop', 'rooms', 'net', 'bus', 'fleet'),
    'tools': ('base', 'sim', 'hub', 'wire'),
}

# The core's one public header: the only one of server/sim/ that other folders include.
SIM_PUBLIC = 'server/sim/fluid_sim.h'

# Headers of the network, JSON and msgpack libraries (and of sockets): the
# core (server/sim/) includes none of them.
FOREIGN = ['libwebsockets.h', 'libwebsockets/*', 'lws_config.h', 'lws-*.h',
           'cJSON.h', 'cjson/*', 'json-c/*', 'jansson.h', 'yajl/*',
           'msgpack.h', 'msgpack/*', 'sys/socket.h', 'sys/un.h', 'sys/epoll.h', 'sys/select.h',
           'poll.h', 'netdb.h', 'ifaddrs.h', 'netinet/*', 'arpa/*', 'net/*', 'openssl/*',
           'curl/*', 'zmq.h']
# libwebsockets' headers: only server/net/ includes them.
LWS = ['libwebsockets.h', 'libwebsockets/*', 'lws_config.h', 'lws-*.h']

INCLUDE = re.compile(r'#\s*include\s*([<"])([^>"]+)[>"]')


def matches(name, patterns):
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def layer_table():
    rows = ['  %-7s -> %s' % (k, ', '.join(v) if v else '(nothing)') for k, v in LAYERS.items()]
    return ('allowed dependencies (tests/layering/check_layers.py LAYERS; of sim, only %s):\n' % SIM_PUBLIC
            + '\n'.join(rows))


class Tree:
    """The C files of ROOT/server/ and their includes, resolved."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.files = []  # paths relative to root, '/'-separated
        srv = os.path.join(self.root, 'server')
        for d, dirs, names in os.walk(srv):
            dirs[:] = sorted(x for x in dirs if x != 'node_modules' and not x.startswith('.'))
            for nm in sorted(names):
                if nm.endswith(('.c', '.h')):
                    self.files.append(os.path.relpath(os.path.join(d, nm), self.root).replace(os.sep, '/'))
        hdr_dirs = sorted({f.rsplit('/', 1)[0] for f in self.files if f.endswith('.h')})
        self.idirs = ['server'] + [d for d in hdr_dirs if d != 'server']
        self.fileset = set(self.files)
        self.includes = {}  # file -> [(line, name, resolved path or None, quoted)]
        self.problems = []  # include resolution problems
        for f in self.files:
            self.includes[f] = self._includes_of(f)

    def _includes_of(self, f):
        with open(os.path.join(self.root, f), encoding='utf-8', errors='replace') as fh:
            src = fh.read()
        out = []
        for t in lex.tokenize(src, 'c'):
            if t.kind != 'directive':
                continue
            m = INCLUDE.match(t.text.lstrip())
            if not m:
                continue
            quoted, name = m.group(1) == '"', m.group(2)
            out.append((t.line, name, self._resolve(f, t.line, name, quoted), quoted))
        return out

    def _resolve(self, f, line, name, quoted):
        if quoted:
            here = os.path.normpath(os.path.join(os.path.dirname(f), name)).replace(os.sep, '/')
            if here in self.fileset:
                return here
        found = [p for p in (os.path.normpath(d + '/' + name).replace(os.sep, '/') for d in self.idirs)
                 if p in self.fileset]
        if len(found) > 1:
            self.problems.append('%s:%d: "%s" is ambiguous on the include path: %s (the -I order decides)'
                                 % (f, line, name, ', '.join(found)))
        if found:
            return found[0]
        if quoted:
            self.problems.append('%s:%d: "%s" is not in the tree' % (f, line, name))
        return None


def layer_of(path):
    """'sim', 'net', ..., 'main.c' for server/main.c, None for anything else."""
    parts = path.split('/')
    if len(parts) == 2:
        return 'main.c' if parts[1] == 'main.c' else None
    return parts[1]


def check_sim_pure(tree):
    bad = []
    for f in tree.files:
        if not f.startswith('server/sim/'):
            continue
        for line, name, res, _ in tree.includes[f]:
            if res is None and matches(name, FOREIGN):
                bad.append('%s:%d: the core includes <%s> (a network, JSON or msgpack header)' % (f, line, name))
            elif res is not None and not res.startswith('server/sim/'):
                bad.append('%s:%d: the core includes %s, a header outside server/sim/' % (f, line, res))
    return bad


def lws_chain(tree, f, seen):
    """A chain of includes from f to a libwebsockets header, or None."""
    for line, name, res, _ in tree.includes.get(f, ()):
        if res is None and matches(name, LWS):
            return ['%s:%d <%s>' % (f, line, name)]
        if res is not None and res not in seen:
            seen.add(res)
            rest = lws_chain(tree, res, seen)
            if rest:
                return ['%s:%d' % (f, line)] + rest
    return None


def check_lws_edge(tree):
    bad = []
    for f in tree.files:
        if f.startswith('server/net/'):
            continue
        chain = lws_chain(tree, f, {f})
        if chain:
            bad.append('%s includes libwebsockets outside server/net/: %s' % (f, ' -> '.join(chain)))
    return bad


def check_folders(tree):
    bad = []
    for f in tree.files:
        lay = layer_of(f)
        if lay not in LAYERS:
            bad.append('%s: not in a layer folder (%s)' % (f, ', '.join('server/' + k for k in LAYERS if k != 'main.c')))
            continue
        for line, name, res, _ in tree.includes[f]:
            if res is None:
                continue
            to = layer_of(res)
            if to == lay:
                continue
            if to not in LAYERS or to not in LAYERS[lay]:
                bad.append('%s:%d: %s includes %s (%s -> %s is not allowed)'
                           % (f, line, lay, res, lay, to if to else res))
            elif to == 'sim' and res != SIM_PUBLIC:
                bad.append('%s:%d: %s includes %s: outside server/sim/ only its public header %s'
                           % (f, line, lay, res, SIM_PUBLIC))
    if bad:
        bad.append(layer_table())
    return bad


def cycles(graph):
    """Tarjan's strongly connected components of graph {node: {node: label}};
    returns, for each component of more than one node, (members, cycle) where
    cycle is a shortest circle through its first member, as a node list."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        # iterative Tarjan: (node, iterator over its successors)
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    result = []
    for comp in sorted(out):
        members = set(comp)
        start = comp[0]
        prev, frontier, found = {start: None}, [start], None
        while frontier and found is None:
            nxt = []
            for u in frontier:
                for w in sorted(graph.get(u, ())):
                    if w == start:
                        found = u
                        break
                    if w in members and w not in prev:
                        prev[w] = u
                        nxt.append(w)
                if found is not None:
                    break
            frontier = nxt
        path, u = [start], found
        while u is not None and u != start:
            path.insert(1, u)
            u = prev[u]
        result.append((comp, path + [start]))
    return result


def module_of(path):
    return path[:-2]  # server/hub/hub.c and server/hub/hub.h -> server/hub/hub


def check_include_cycles(tree):
    graph = {}
    for f in tree.files:
        a = module_of(f)
        deps = graph.setdefault(a, {})
        for line, name, res, _ in tree.includes[f]:
            if res is not None and res.endswith('.h') and module_of(res) != a:
                deps.setdefault(module_of(res), '%s:%d' % (f, line))
    return circles(graph, 'include circle')


def nm_symbols(obj):
    out = subprocess.run(['nm', '-P', '-g', obj], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError('nm %s: %s' % (obj, out.stderr.strip()))
    defined, undefined = {}, set()
    for ln in out.stdout.splitlines():
        parts = ln.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind in 'Uw':
            undefined.add(name)
        else:
            defined[name] = name if kind in 'TtWi' else name + ' [data]'
    return defined, undefined


def check_call_cycles(objects):
    owner, undef = {}, {}
    for o in objects:
        d, u = nm_symbols(o)
        undef[o] = u
        for s, label in d.items():
            owner.setdefault(s, (o, label))
    graph = {}
    for o in objects:
        deps = graph.setdefault(o, {})
        for s in sorted(undef[o]):
            b = owner.get(s)
            if b is not None and b[0] != o:
                deps.setdefault(b[0], b[1])
    return circles(graph, 'call circle')


def circles(graph, what):
    """One message per circle of graph {node: {node: why}}: the circle with the why of each step."""
    bad = []
    for comp, path in cycles(graph):
        steps = ['%s (%s)' % (path[i], graph[path[i]][path[i + 1]]) for i in range(len(path) - 1)]
        msg = what + ': ' + ' -> '.join(steps) + ' -> ' + path[-1]
        if len(comp) > len(path) - 1:
            msg += scc_edges(graph, comp)
        bad.append(msg)
    return bad


def scc_edges(graph, comp):
    """The dependencies inside a component larger than the circle shown: what to cut."""
    members = set(comp)
    edges = ['%s -> %s (%s)' % (a, b, graph[a][b]) for a in comp for b in sorted(graph.get(a, ())) if b in members]
    more = '' if len(edges) <= 40 else '\n      ... %d more' % (len(edges) - 40)
    return '\n    (one circle of %d files that depend on each other: %s)\n    dependencies among them:\n      %s%s' % (
        len(comp), ', '.join(comp), '\n      '.join(edges[:40]), more)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('root', help='the tree (its server/ folder is checked)')
    ap.add_argument('--objects', nargs='+', metavar='FILE.o',
                    help='also check the calls between these object files for circles (nm)')
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.root, 'server')):
        print('check-layers: %s has no server/ folder' % args.root)
        print('check-layers: 0 passed, 1 failed')
        return 1
    tree = Tree(args.root)
    checks = [
        ('includes resolve', lambda: tree.problems),
        ('server/sim/ includes no network, JSON or msgpack header, nor any header outside server/sim/',
         lambda: check_sim_pure(tree)),
        ('only server/net/ includes libwebsockets', lambda: check_lws_edge(tree)),
        ('each folder includes only the folders it may', lambda: check_folders(tree)),
        ('no include circles between modules (x.c + x.h)', lambda: check_include_cycles(tree)),
    ]
    if args.objects:
        checks.append(('no call circles between object files (%d files)' % len(args.objects),
                       lambda: check_call_cycles(args.objects)))
    return verdict.report('check-layers', [(title, fn()) for title, fn in checks])


if __name__ == '__main__':
    sys.exit(main())
