#!/usr/bin/env python3
# test_checks.py - tests of the layering and shape checks: each builds a small
# tree in a temporary folder, broken on purpose in one way (or not at all),
# runs check_layers.py / check_shape.py / check_timing.py / check_history.py on it and asserts
# the verdict and the message that names the offender.  Closes with "test-checks: N passed, N failed".

import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the tree
import verdict  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS = os.path.join(HERE, 'check_layers.py')
SHAPE = os.path.join(HERE, 'check_shape.py')
TIMING = os.path.join(HERE, 'check_timing.py')
# The history check's fixtures spell the words it looks for by parts, so that
# this file itself shows no change history to a search for it.
SESSION, ISSUE = 'ses' + 'sion', 'is' + 'sue'
HISTORY = os.path.join(HERE, 'check_history.py')


def c_file(name, includes=(), body=''):
    head = '/* %s - a part of the test tree. */\n' % name
    return head + ''.join('#include %s\n' % i for i in includes) + body


def h_file(name, includes=(), body=''):
    return c_file(name, includes, body)


# A small tree that follows every rule: each layer includes only what it may.
GOOD = {
    'server/sim/fluid_sim.h': h_file('fluid_sim.h', ['<stddef.h>'], 'int fs_step(void);\n'),
    'server/sim/world.c': c_file('world.c', ['"fluid_sim.h"', '<math.h>'], 'int fs_step(void)\n{\n    return 0;\n}\n'),
    'server/base/log.h': h_file('log.h', [], 'void log_line(const char *s);\n'),
    'server/base/log.c': c_file('log.c', ['"log.h"', '<stdio.h>'], 'void log_line(const char *s) { puts(s); }\n'),
    'server/hub/hub.h': h_file('hub.h', ['"log.h"', '"fluid_sim.h"', '<pthread.h>']),
    'server/hub/value.h': h_file('value.h', ['"fluid_sim.h"']),
    'server/hub/hub.c': c_file('hub.c', ['"hub.h"', '"value.h"']),
    'server/wire/wire.h': h_file('wire.h', ['"value.h"']),
    'server/wire/wire.c': c_file('wire.c', ['"wire.h"', '<msgpack.h>', '<cJSON.h>']),
    'server/loop/loop.h': h_file('loop.h', ['"hub.h"']),
    'server/loop/loop.c': c_file('loop.c', ['"loop.h"', '"wire.h"', '"log.h"', '"fluid_sim.h"']),
    'server/net/net.h': h_file('net.h', ['"hub.h"']),
    'server/net/net_lws.h': h_file('net_lws.h', ['<libwebsockets.h>']),
    'server/net/net.c': c_file('net.c', ['"net.h"', '"net_lws.h"', '"wire.h"', '<sys/socket.h>']),
    'server/main.c': c_file('main.c', ['"net.h"', '"loop.h"', '"hub.h"', '"wire.h"', '"log.h"', '"fluid_sim.h"']),
    'web-client/src/main.js': '// main.js - the page of the test tree.\nexport function f() {\n  return 1;\n}\n',
    'web-client/src/ui/panel.js': '/* panel.js - a panel of the test tree. */\nexport const P = { a: 1 };\n',
}


def tree(changes):
    d = tempfile.mkdtemp(prefix='layering-test-')
    files = dict(GOOD)
    files.update(changes)
    for path, text in files.items():
        if text is None:
            continue
        p = os.path.join(d, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, 'w') as fh:
            fh.write(text)
    return d


def run(script, root, *extra):
    r = subprocess.run([sys.executable, script, root] + list(extra), capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


RESULTS = []


def case(name, script, changes, expect_rc, expect_text=(), absent_text=(), objects=None):
    d = tree(changes)
    try:
        extra = []
        if objects:
            extra = ['--objects'] + build_objects(d, objects)
        rc, out = run(script, d, *extra)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    out = out.replace(d + '/', '')
    why = []
    if rc != expect_rc:
        why.append('exit %d, wanted %d' % (rc, expect_rc))
    why += ['no %r in the output' % t for t in expect_text if t not in out]
    why += ['%r in the output' % t for t in absent_text if t in out]
    RESULTS.append((name, why, out))


def build_objects(root, sources):
    objs = []
    for src in sources:
        obj = os.path.join(root, 'obj', os.path.basename(src)[:-2] + '.o')
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        subprocess.run(['cc', '-std=c11', '-c', os.path.join(root, src), '-o', obj], check=True)
        objs.append(obj)
    return objs


def long_c(name, n, static_table=0):
    """A C function of exactly n lines (name line to closing brace); with
    static_table, a static table of that many lines inside it as well."""
    body = ['int %s(int x)' % name, '{']
    if static_table:
        body.append('    static const int table[] = {')
        body += ['        %d,' % i for i in range(static_table - 2)]
        body.append('    };')
        body.append('    x += table[x & 1];')
    while len(body) < n - 2:
        body.append('    x += 1;')
    body += ['    return x;', '}']
    return '\n'.join(body) + '\n'


def long_js(n, arrow=False):
    head = 'export const g = (x) => {' if arrow else 'export function g(x) {'
    body = [head]
    # braces inside strings, templates and regular expressions must not count
    body.append("  const s = '{', t = `${x}{`, r = /\\{[}]/;")
    while len(body) < n - 2:
        body.append('  x += 1;')
    body += ['  return x + s + t + r;', '}']
    return '// main.js - the page of the test tree.\n' + '\n'.join(body) + '\n'


def main():
    # --- the layering check ---
    case('layers: a good tree passes', LAYERS, {}, 0, ['check-layers: 5 passed, 0 failed'])
    case('layers: sim includes msgpack.h', LAYERS,
         {'server/sim/world.c': c_file('world.c', ['"fluid_sim.h"', '<msgpack.h>'])}, 1,
         ['server/sim/world.c:3: the core includes <msgpack.h>', 'check-layers: 4 passed, 1 failed'])
    case('layers: sim includes sockets and JSON', LAYERS,
         {'server/sim/world.c': c_file('world.c', ['<sys/socket.h>', '<netinet/in.h>', '<cjson/cJSON.h>'])}, 1,
         ['world.c:2: the core includes <sys/socket.h>', 'world.c:3: the core includes <netinet/in.h>',
          'world.c:4: the core includes <cjson/cJSON.h>'])
    case('layers: sim includes a header outside sim/', LAYERS,
         {'server/sim/world.c': c_file('world.c', ['"fluid_sim.h"', '"log.h"'])}, 1,
         ['server/sim/world.c:3: the core includes server/base/log.h, a header outside server/sim/',
          'sim -> base is not allowed'])
    case('layers: loop includes libwebsockets.h', LAYERS,
         {'server/loop/loop.c': c_file('loop.c', ['"loop.h"', '<libwebsockets.h>'])}, 1,
         ['server/loop/loop.c includes libwebsockets outside server/net/: server/loop/loop.c:3 <libwebsockets.h>'])
    case('layers: main.c includes libwebsockets.h', LAYERS,
         {'server/main.c': c_file('main.c', ['"net.h"', '<libwebsockets.h>'])}, 1,
         ['server/main.c includes libwebsockets outside server/net/'])
    case('layers: main.c reaches libwebsockets through a net header', LAYERS,
         {'server/main.c': c_file('main.c', ['"net.h"', '"net_lws.h"'])}, 1,
         ['server/main.c:3 -> server/net/net_lws.h:2 <libwebsockets.h>'])
    case('layers: net includes loop', LAYERS,
         {'server/net/net.c': c_file('net.c', ['"net.h"', '"loop.h"'])}, 1,
         ['server/net/net.c:3: net includes server/loop/loop.h (net -> loop is not allowed)',
          'allowed dependencies', 'net     -> rooms, wire, hub, base, sim'])
    case('layers: hub includes wire', LAYERS,
         {'server/hub/hub.c': c_file('hub.c', ['"hub.h"', '"wire.h"'])}, 1,
         ['server/hub/hub.c:3: hub includes server/wire/wire.h (hub -> wire is not allowed)'])
    case('layers: loop includes the core\'s private header', LAYERS,
         {'server/sim/sim_internal.h': h_file('sim_internal.h', ['"fluid_sim.h"']),
          'server/loop/loop.c': c_file('loop.c', ['"loop.h"', '"sim_internal.h"'])}, 1,
         ['server/loop/loop.c:3: loop includes server/sim/sim_internal.h: outside server/sim/ only its public '
          'header server/sim/fluid_sim.h'])
    case('layers: a file outside the layer folders', LAYERS,
         {'server/extra.c': c_file('extra.c', ['"hub.h"'])}, 1,
         ['server/extra.c: not in a layer folder'])
    case('layers: a.c and b.c include each other\'s headers', LAYERS,
         {'server/hub/a.h': h_file('a.h'), 'server/hub/a.c': c_file('a.c', ['"a.h"', '"b.h"']),
          'server/hub/b.h': h_file('b.h'), 'server/hub/b.c': c_file('b.c', ['"b.h"', '"a.h"'])}, 1,
         ['include circle: server/hub/a (server/hub/a.c:3) -> server/hub/b (server/hub/b.c:3) -> server/hub/a',
          'check-layers: 4 passed, 1 failed'])
    case('layers: a circle of three modules', LAYERS,
         {'server/wire/a.h': h_file('a.h', ['"b.h"']), 'server/wire/a.c': c_file('a.c', ['"a.h"']),
          'server/wire/b.h': h_file('b.h'), 'server/wire/b.c': c_file('b.c', ['"b.h"', '"c.h"']),
          'server/wire/c.h': h_file('c.h', ['"a.h"'])}, 1,
         ['include circle: server/wire/a (server/wire/a.h:2) -> server/wire/b (server/wire/b.c:3) '
          '-> server/wire/c (server/wire/c.h:2) -> server/wire/a'])
    case('layers: a value-only header including hub.h, no circle', LAYERS,
         {'server/hub/v.h': h_file('v.h', ['"hub.h"'])}, 0, ['check-layers: 5 passed'])
    case('layers: hub.h and a value-only header include each other', LAYERS,
         {'server/hub/v.h': h_file('v.h', ['"hub.h"']),
          'server/hub/hub.h': h_file('hub.h', ['"log.h"', '"v.h"'])}, 1,
         ['include circle: server/hub/hub (server/hub/hub.h:3) -> server/hub/v (server/hub/v.h:2) -> server/hub/hub'])
    case('layers: a header not in the tree', LAYERS,
         {'server/hub/hub.c': c_file('hub.c', ['"hub.h"', '"gone.h"'])}, 1,
         ['server/hub/hub.c:3: "gone.h" is not in the tree'])
    case('layers: one name in two folders on the include path', LAYERS,
         {'server/wire/log.h': h_file('log.h')}, 1, ['"log.h" is ambiguous on the include path'])
    case('layers: an include inside a comment or a string does not count', LAYERS,
         {'server/sim/world.c': c_file('world.c', ['"fluid_sim.h"'],
                                       '/*\n#include <msgpack.h>\n*/\nconst char *s = "#include <libwebsockets.h>";\n')},
         0, ['check-layers: 5 passed, 0 failed'])
    calls = {'server/hub/p.c': c_file('p.c', [], 'int q(void);\nint p(int n) { return n ? q() : 0; }\n'),
             'server/hub/q.c': c_file('q.c', [], 'int p(int n);\nint q(void) { return p(0); }\n'),
             'server/hub/r.c': c_file('r.c', [], 'int p(int n);\nint r(void) { return p(1); }\n')}
    case('layers: two object files call each other', LAYERS, calls, 1,
         ['call circle: obj/p.o (q) -> obj/q.o (p) -> obj/p.o', 'check-layers: 5 passed, 1 failed'],
         ['obj/r.o'], objects=['server/hub/p.c', 'server/hub/q.c', 'server/hub/r.c'])
    case('layers: object files calling one way pass', LAYERS, calls, 0,
         ['check-layers: 6 passed, 0 failed'], objects=['server/hub/p.c', 'server/hub/r.c'])

    # --- the shape check ---
    case('shape: a good tree passes', SHAPE, {}, 0, ['check-shape: 3 passed, 0 failed'])
    case('shape: a 151-line C function', SHAPE,
         {'server/hub/hub.c': c_file('hub.c', ['"hub.h"'], long_c('too_long', 151))}, 1,
         ['server/hub/hub.c:3: too_long is 151 lines', 'check-shape: 2 passed, 1 failed'])
    case('shape: a 150-line C function passes', SHAPE,
         {'server/hub/hub.c': c_file('hub.c', ['"hub.h"'], long_c('just_fits', 150))}, 0,
         ['longest function: 150 lines (server/hub/hub.c:3 just_fits)'])
    case('shape: a static table inside a function does not count', SHAPE,
         {'server/hub/hub.c': c_file('hub.c', ['"hub.h"'], long_c('with_table', 200, static_table=120))}, 0,
         ['check-shape: 3 passed, 0 failed'])
    case('shape: a 151-line JS function', SHAPE, {'web-client/src/main.js': long_js(151)}, 1,
         ['web-client/src/main.js:2: g is 151 lines'])
    case('shape: a 151-line JS arrow function', SHAPE, {'web-client/src/main.js': long_js(151, arrow=True)}, 1,
         ['web-client/src/main.js:2: <arrow> is 151 lines'])
    case('shape: a 150-line JS function passes', SHAPE, {'web-client/src/main.js': long_js(150)}, 0,
         ['longest function: 150 lines'])
    table = '// main.js - the page.\nexport function cfg() {\n  return {\n' + \
        ''.join('    k%d: [%d, %d],\n' % (i, i, i) for i in range(200)) + '  };\n}\n'
    case('shape: a JS function returning an object literal table passes', SHAPE,
         {'web-client/src/main.js': table}, 0, ['longest function: 4 lines'])
    case('shape: a C file without a first-line comment', SHAPE,
         {'server/hub/hub.c': '#include "hub.h"\nint x;\n'}, 1,
         ['server/hub/hub.c:1: the first line is not a comment "/* hub.c - what it is"'])
    case('shape: a header whose first line names another file', SHAPE,
         {'server/hub/value.h': '/* values.h - the values. */\n'}, 1,
         ['server/hub/value.h:1: the first line names values.h, not value.h'])
    case('shape: a first line that only points elsewhere', SHAPE,
         {'server/base/log.c': '/* log.c - see log.h. */\n'}, 1,
         ['server/base/log.c:1: the first line does not say what the file is'])
    case('shape: a JS file without a first-line comment', SHAPE,
         {'web-client/src/ui/panel.js': 'export const P = 1;\n'}, 1,
         ['web-client/src/ui/panel.js:1: the first line is not a comment "// panel.js - what it is"'])

    # --- the timing check: tests assert no duration, rate or latency ---
    def js(body):
        return "// x.test.mjs - a test of the test tree.\nimport assert from 'node:assert';\n" + body + '\n'
    waits = js('const until = Date.now() + 30000;\nwhile (Date.now() < until && f.tick <= t0) f = await next();\n'
               'assert.ok(f.tick > t0, `the tick advanced`);')
    case('timing: a deadline and a functional assertion pass', TIMING, {'tests/server/x.test.mjs': waits}, 0,
         ['check-timing: 1 passed, 0 failed'])
    case('timing: an elapsed time asserted', TIMING,
         {'tests/server/x.test.mjs': js('const t0 = Date.now();\nawait go();\nconst moved = Date.now() - t0;\n'
                                        'assert.ok(moved < 5000, `moved in ${moved} ms`);')}, 1,
         ['tests/server/x.test.mjs:6: an assertion uses moved, computed from a clock difference'])
    case('timing: a rate derived from an elapsed time, through a chain', TIMING,
         {'tests/web/e2e/x.test.mjs': js('const dt = (performance.now() - t0) / 1000;\nconst rate = n / dt;\n'
                                         'assert.ok(rate > 0.4 * 30);')}, 1,
         ['tests/web/e2e/x.test.mjs:5: an assertion uses rate, computed from a clock difference'])
    case('timing: a clock read inside an assertion', TIMING,
         {'tests/server/x.test.mjs': js('assert.ok(Date.now() - t < 500, "the cursor shows");')}, 1,
         ['tests/server/x.test.mjs:3: an assertion reads the clock'])
    case("timing: a server's rate figure asserted", TIMING,
         {'tests/server/x.test.mjs': js('assert.ok(\n  st.realtime_ratio > 0.9,\n  "slow");')}, 1,
         ['tests/server/x.test.mjs:3: an assertion names a timing quantity (realtime_ratio)'])
    case('timing: a rate in a custom check', TIMING,
         {'tests/soak/x.mjs': js('check(`viewer >= ${BAR} frames/s`, fps >= BAR);')}, 1,
         ['tests/soak/x.mjs:3: an assertion names a timing quantity'])
    case('timing: an elapsed time in a C test', TIMING,
         {'tests/sim/test_x.c': '/* test_x.c - a test. */\nstatic void t(void) {\n    CHECK(elapsed < 2.0, "fast");\n}\n'}, 1,
         ['tests/sim/test_x.c:3: an assertion names a timing quantity (elapsed)'])
    case('timing: benchmarks and marked lines are exempt', TIMING,
         {'tests/bench/x.mjs': js('assert.ok(fps >= 27);'), 'tests/server/bench_y.mjs': js('assert.ok(fps >= 27);'),
          'tests/web/unit/x.test.mjs': js('assert.ok(p.latency(150) === 0); // not-timed: a fake clock')}, 0,
         ['1 assertions marked not-timed', 'check-timing: 1 passed, 0 failed'])

    # --- the history check: no session or issue numbers, no dates outside the records ---
    case('history: a clean tree passes', HISTORY, {}, 0, ['check-history: 2 passed, 0 failed'])
    case('history: a session number in a core comment', HISTORY,
         {'server/sim/world.c': c_file('world.c', ['"fluid_sim.h"'], '/* The bar of %s 16. */\n' % SESSION)}, 1,
         ['server/sim/world.c:3: "%s 16"' % SESSION, 'check-history: 1 passed, 1 failed'])
    case('history: an issue number in a test', HISTORY,
         {'tests/server/x.test.mjs': js("// the reproducer of %s #13\nassert.ok(true);" % ISSUE)}, 1,
         ['tests/server/x.test.mjs:3: "%s #13"' % ISSUE])
    case('history: an issue number in a file name', HISTORY,
         {'tests/fuzz/crashes/README.md': '| `fuzz_rest/issue13-patch` | a crash |\n'}, 1,
         ['tests/fuzz/crashes/README.md:1: "issue13"'])
    case('history: a date in PROTOCOL.md', HISTORY,
         {'protocol/PROTOCOL.md': '# Protocol\n\nUntil 2026-11-27 the states were renormalised by bytes.\n'}, 1,
         ['protocol/PROTOCOL.md:3: "2026-11-27"', 'check-history: 1 passed, 1 failed'])
    case('history: an ISO timestamp in a log format passes', HISTORY,
         {'server/base/log.h': h_file('log.h', [], '/* 2026-11-22T11:40:02.123Z info  fluid-server: message */\n'),
          'README.md': 'Log lines: `2026-11-22T11:40:02.123Z info  fluid-server: message`.\n'}, 0,
         ['check-history: 2 passed, 0 failed'])
    case('history: docs/history/, measurement records and node_modules are exempt', HISTORY,
         {'docs/history/wire-v2.md': '## %s 13: the table coder (2026-11-27)\n\n%s 13 asked for it.\n' % (SESSION.title(), ISSUE.title()),
          'docs/fuzzing.md': '## Runs (2026-11-23)\n', 'tests/soak/README.md': '## Measured (2026-11-23)\n',
          'tests/server/node_modules/m/index.js': '// fixes %s 42 (2026-01-02)\n' % ISSUE}, 0,
         ['check-history: 2 passed, 0 failed'])
    case('history: a measurement record carries dates, not issue numbers', HISTORY,
         {'docs/scale.md': '# Scale\n\nMeasured 2026-11-24 for %s 18.\n' % ISSUE}, 1,
         ['docs/scale.md:3: "%s 18"' % ISSUE], ['"2026-11-24"'])

    return verdict.report('test-checks', [(name, ['; '.join(why), out.strip()] if why else [])
                                          for name, why, out in RESULTS])


if __name__ == '__main__':
    sys.exit(main())
