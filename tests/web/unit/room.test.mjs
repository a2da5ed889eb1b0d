// room.test.mjs - the room a page path names and the addresses that follow
// (web-client/src/room.js): /r/{name}/ for a room, the plain routes otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { roomOfPath, apiPath, streamPath, roomName } from '../../../web-client/src/room.js';
import { roomLabel } from '../../../web-client/src/ui/rooms_panel.js';

test('room: the path names the room; anything else is the default room', () => {
  assert.equal(roomOfPath('/r/lab/'), 'lab');
  assert.equal(roomOfPath('/r/lab'), 'lab');
  assert.equal(roomOfPath('/r/lab/index.html'), 'lab');
  assert.equal(roomOfPath('/r/a-1/'), 'a-1');
  assert.equal(roomOfPath('/'), null);
  assert.equal(roomOfPath('/index.html'), null);
  assert.equal(roomOfPath('/r/'), null);
  assert.equal(roomOfPath('/r/Lab/'), null, 'not a room name');
  assert.equal(roomOfPath(`/r/${'a'.repeat(32)}/`), null, 'longer than 31');
  assert.equal(roomOfPath('/rooms/lab/'), null);
});

test('room: REST and stream addresses', () => {
  assert.equal(apiPath('/stats', 'lab'), '/api/rooms/lab/stats');
  assert.equal(apiPath('/stats', null), '/api/stats');
  assert.equal(streamPath('lab'), '/r/lab/');
  assert.equal(streamPath(null), '/');
  assert.equal(roomName(null), 'default');
  assert.equal(roomName('lab'), 'lab');
});

test('room: the Rooms list names each room with its viewers and state (rooms_panel.js reads the DOM only when made)', () => {
  assert.equal(roomLabel({ name: 'lab', clients: 3, state: 'running' }), 'lab · 3 viewers · running');
  assert.equal(roomLabel({ name: 'a', clients: 1, state: 'running' }), 'a · 1 viewer · running');
  assert.equal(roomLabel({ name: 'b', clients: 0, state: 'asleep' }), 'b · 0 viewers · asleep');
});
