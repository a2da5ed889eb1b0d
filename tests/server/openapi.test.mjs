// openapi.test.mjs - protocol/openapi.json is a valid OpenAPI 3.0 document,
// and it lists exactly the routes the server answers: every path and method
// in it is served, and every endpoint the server lists (GET /api) is in it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startServer, stopAll, get, http, ROOT } from './lib.mjs';

const spec = JSON.parse(readFileSync(join(ROOT, 'protocol', 'openapi.json'), 'utf8'));
let s;
before(async () => { s = await startServer(['--particles', '1000']); });
after(async () => { await stopAll(); });

test('openapi.json validates against the OpenAPI 3.0 schema', async () => {
  const v = new Validator();
  const r = await v.validate(spec);
  assert.equal(r.valid, true, JSON.stringify(r.errors, null, 1)?.slice(0, 2000));
  assert.equal(v.version, '3.0');
});

test('every operation has an operationId, snake_case and unique (the Python client has a method of that name)', () => {
  const ids = Object.values(spec.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
  assert.ok(ids.length >= 20, `${ids.length} operations`);
  for (const id of ids) assert.match(String(id), /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/, `operationId ${id}`);
  assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
});

test('every path and method in openapi.json is served (no 404/405)', async () => {
  let n = 0;
  for (const [path, ops] of Object.entries(spec.paths)) {
    for (const method of Object.keys(ops)) {
      const body = method === 'get' ? undefined : {};
      const r = await http(s, method.toUpperCase(), path.replace('{name}', 'water').replace('{id}', '4000000000'), { body });
      const missing = (path.includes('{id}') && r.status === 404 && /unknown (body|obstacle)/.test(r.json?.error)) ||
        (path.includes('/recordings/{name}') && r.status === 404 && /no such recording file|keeps no recordings/.test(r.json?.error)) ||
        (path.includes('/rooms/{name}') && r.status === 404 && /no room named 'water'/.test(r.json?.error)) ||
        (path.includes('/probes/{name}') && r.status === 404 && /unknown probe 'water'/.test(r.json?.error));
      assert.ok(missing || (r.status !== 404 && r.status !== 405), `${method} ${path}: ${r.status} ${r.text.slice(0, 200)}`);
      // the answer has the content type the spec gives for its status
      const want = Object.keys((ops[method].responses[String(r.status)] || ops[method].responses['200']).content || {});
      const ct = r.headers.get('content-type') || '';
      assert.ok(want.length === 0 || want.some((w) => ct.startsWith(w)), `${method} ${path}: ${ct} not in ${want}`);
      n++;
    }
  }
  assert.ok(n >= 20, `${n} operations`);
  await http(s, 'POST', '/api/resume');
});

test('every endpoint the server lists is in openapi.json, and the other way round', async () => {
  const listed = (await get(s, '/api')).json.endpoints.map((e) => {
    const [method, path] = e.split(' ');
    return `${method.toLowerCase()} ${path.replace(/\?.*$/, '')}`;
  });
  const inSpec = Object.entries(spec.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`));
  assert.deepEqual([...listed].sort(), [...inSpec].sort());
  // and a path in neither is a 404
  assert.equal((await get(s, '/api/nothing_here')).status, 404);
});
