// rooms_panel.js - the panel's Rooms section: the rooms of this server (GET
// /api/rooms: name, viewers, state), a link to each one's page, and, for
// the administrator (the role that may make rooms), a form that makes one
// (POST /api/rooms) and goes there.  The page's credential (?token=) goes
// with the request and with the link to the new room's page.
import { ROOM } from '../room.js';
import { allows, lockReason } from './roles.js';

const $ = (id) => document.getElementById(id);

// A room's line in the list: "lab · 3 viewers · running".
export function roomLabel(r) {
  const v = r.clients === 1 ? '1 viewer' : `${r.clients ?? 0} viewers`;
  return `${r.name} · ${v} · ${r.state}`;
}

export class RoomsPanel {
  // token: the page's ?token= (or null); toast(text, bad): a message to the user
  constructor(token, toast) {
    this.token = token;
    this.toast = toast;
    this.role = 'viewer';
    $('room-go').addEventListener('click', () => this.go($('room-list').value));
    $('room-new').addEventListener('submit', (ev) => { ev.preventDefault(); this.create(); });
  }

  // The link to a room's page, with this page's token.
  link(url) { return this.token ? `${url}?token=${encodeURIComponent(this.token)}` : url; }

  go(url) { if (url) location.assign(this.link(url)); }

  // After each hello: the role decides whether the form may be used.
  fromHello(h) {
    this.role = h.role || 'admin';
    const ok = allows(this.role, 'admin');
    for (const id of ['room-name-new', 'room-create']) {
      const el = $(id);
      el.disabled = !ok;
      el.title = ok ? 'make a room: its own world and stream' : lockReason(this.role, 'admin');
    }
    this.refresh();
  }

  async refresh() {
    try {
      const r = await fetch('/api/rooms', { signal: AbortSignal.timeout(5000), cache: 'no-store' });
      if (!r.ok) return;
      const j = await r.json();
      const sel = $('room-list');
      const here = ROOM ?? 'default';
      sel.replaceChildren(...(j.rooms || []).map((x) => {
        const o = document.createElement('option');
        o.value = x.name === 'default' ? '/' : x.url;
        o.textContent = roomLabel(x);
        o.selected = x.name === here;
        return o;
      }));
    } catch { /* the server is away: the banner says so */ }
  }

  async create() {
    const name = $('room-name-new').value.trim();
    const scene = $('scene').value || undefined;
    const headers = { 'Content-Type': 'application/json' };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    $('room-create').disabled = true;
    try {
      const r = await fetch('/api/rooms', { method: 'POST', headers, body: JSON.stringify({ name, scene }) });
      const j = await r.json();
      if (!r.ok) { this.toast(`new room: ${j.error}`, true); return; }
      this.go(j.url);
    } catch (e) {
      this.toast(`new room: ${e.message || e}`, true);
    } finally {
      $('room-create').disabled = !allows(this.role, 'admin');
    }
  }
}
