// roles.test.mjs - the page's role locks (web-client/src/ui/roles.js) agree
// with the server's table (protocol/PROTOCOL.md, "Rooms and roles"): each
// control needs the role of the command it sends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NEEDS, ROLES, allows, lockReason } from '../../../web-client/src/ui/roles.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

// The command each control sends (web-client/src/ui/panel.js, actions.js, tools/).
const SENDS = {
  'tool:push': 'push', 'tool:heat': 'heat', 'tool:cool': 'heat',
  'add-sphere': 'body_create', 'add-box': 'body_create', 'add-capsule': 'body_create', 'clear-bodies': 'body_destroy',
  scene: 'load_scene', count: 'load_scene', load: 'load_scene', solver: 'set_solver', pause: 'pause', step: 'step',
  emitter: 'emitter', 'scene-emitter': 'emitter', 'floor-plate': 'heater', record: 'record_start', 'mat-params': 'set_param',
  // a mesh file is uploaded (mesh_upload), then placed (obstacle_add, which needs less)
  'add-mesh': 'mesh_upload', 'mesh-file': 'mesh_upload', 'clear-obstacles': 'obstacle_remove',
};

function protocolTable() {
  const md = readFileSync(join(ROOT, 'protocol', 'PROTOCOL.md'), 'utf8');
  const block = md.slice(md.indexOf('<!-- role-table: commands -->'), md.indexOf('<!-- /role-table -->'));
  const t = {};
  for (const m of block.matchAll(/^\| `([a-z_]+)` \| ([a-z]+) \|$/gm)) t[m[1]] = m[2];
  return t;
}

test('roles: every locked control needs the role of the command it sends, as PROTOCOL.md says', () => {
  const table = protocolTable();
  assert.ok(Object.keys(table).length >= 20, 'the command table was read');
  assert.deepEqual(Object.keys(NEEDS).sort(), Object.keys(SENDS).sort());
  for (const [id, cmd] of Object.entries(SENDS)) {
    assert.ok(table[cmd], `${cmd} is in the table`);
    assert.equal(NEEDS[id], table[cmd], `${id} sends ${cmd}, which needs ${table[cmd]}`);
  }
});

test('roles: each includes the ones before it; the tooltip names both', () => {
  assert.deepEqual(ROLES, ['viewer', 'player', 'editor', 'owner', 'admin']);
  assert.equal(allows('viewer', 'player'), false);
  assert.equal(allows('player', 'player'), true);
  assert.equal(allows('editor', 'player'), true);
  assert.equal(allows('player', 'editor'), false);
  assert.equal(allows('admin', 'owner'), true);
  assert.equal(allows('nonsense', 'player'), false, 'an unknown role may only watch');
  assert.equal(lockReason('viewer', 'player'), 'needs the player role; you are a viewer here');
  assert.equal(lockReason('editor', 'owner'), 'needs the owner role; you are an editor here');
});
