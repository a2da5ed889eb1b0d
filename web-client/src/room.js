// room.js - the room this page is for: /r/{name}/ names it, any other path
// is the server's default room; and the addresses that follow from it, the
// stream's (/r/{name}/, or /) and the REST routes' (/api/rooms/{name}/...,
// or the plain /api/...), as protocol/PROTOCOL.md, "Rooms and roles", gives.

const NAME = /^\/r\/([a-z0-9-]{1,31})(?:\/|$)/;

// The room a page path names, or null for the default room's plain pages.
export function roomOfPath(pathname) {
  const m = NAME.exec(pathname || '');
  return m ? m[1] : null;
}

export const ROOM = typeof location === 'undefined' ? null : roomOfPath(location.pathname);

// The room's name as the server says it (hello.room) once known; the path's before.
export function roomName(room = ROOM) { return room ?? 'default'; }

// A REST path of the room: apiPath('/stats') is /api/rooms/{name}/stats on a
// room's page, /api/stats on the plain page.
export function apiPath(path, room = ROOM) {
  return room ? `/api/rooms/${room}${path}` : `/api${path}`;
}

// The stream's path on this server.
export function streamPath(room = ROOM) {
  return room ? `/r/${room}/` : '/';
}
