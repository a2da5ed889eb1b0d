// recorder_button.js - the panel's Record button: starts and stops a
// recording on the server (POST /api/recordings, /api/recordings/stop, with
// the page's token when it has one) and shows its state (GET /api/recordings).
import { apiPath } from './room.js';
import { roleLocked } from './ui/roles.js';
const $ = (id) => document.getElementById(id);

export class RecordButton {
  // token: the page's ?token=, or null; toast(text): a message to the user
  constructor(token, toast) {
    this.auth = token ? { Authorization: `Bearer ${token}` } : {};
    this.toast = toast;
    this.active = false;
    $('record').addEventListener('click', () => this.toggle());
    if (token) $('recordings').href = `replay.html?token=${encodeURIComponent(token)}`;
    this.refresh();
  }

  async refresh() {
    try {
      const r = await fetch(apiPath('/recordings'), { headers: this.auth });
      if (!r.ok) return;
      const j = await r.json();
      this.show(j.enabled, j.recording);
    } catch { /* the server is away: the banner says so */ }
  }

  show(enabled, rec) {
    this.active = !!rec?.active;
    $('record').textContent = this.active ? '■ Stop' : '● Record';
    $('record').disabled = !enabled || roleLocked($('record'));
    $('record-state').textContent = !enabled ? 'this server keeps no recordings (--record-dir)'
      : this.active ? `recording ${rec.name}: ${(rec.bytes / 1e6).toFixed(1)} MB, ${rec.frames} frames`
        : rec?.stopped ? `stopped: ${rec.stopped}` : rec?.name ? `last: ${rec.name}` : '';
  }

  async toggle() {
    const path = apiPath(this.active ? '/recordings/stop' : '/recordings');
    try {
      const r = await fetch(path, { method: 'POST', headers: { ...this.auth, 'Content-Type': 'application/json' }, body: '{}' });
      const j = await r.json();
      if (!r.ok) this.toast(`recording: ${j.error}`);
      else this.toast(this.active ? 'recording stopped' : `recording ${j.name}`);
    } catch (e) { this.toast(`recording: ${e.message}`); }
    await this.refresh();
  }
}
