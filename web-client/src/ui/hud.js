// hud.js - the heads-up display: frames per second drawn, the server's tick
// rate and realtime ratio (GET /api/stats, polled every 2 s while connected;
// the frame-derived rates stand in until it answers), particles, kB/s, the
// last round trip, scene, solver, interaction radius, the temperature range
// and how many users are connected; and the world's probes as the newest frame
// carries them (their units from GET /api/probes, asked when the set of
// probes changes).  Updated twice a second.
// page: {conn, panel, stats (StreamStats), newest, hello, cursors, myId}.
import { byteRange } from '../temperature.js';
import { apiPath } from '../room.js';

const $ = (id) => document.getElementById(id);
const fmt = (v, d, unit = '') => (v === null || v === undefined || !Number.isFinite(v) ? '–' : `${v.toFixed(d)}${unit}`);

// The probes' lines, two to a row: [[name, value, name, value], ...]; a
// height in metres to the millimetre, a pressure in whole pascals, a probe
// whose unit is not known yet with 4 significant digits.  probes: {name:
// value}; units: {name: 'm' | 'Pa'}.
export function probeRows(probes, units = {}) {
  const cells = [];
  for (const [name, v] of Object.entries(probes || {})) {
    const u = units[name];
    cells.push(name, u === 'm' ? `${v.toFixed(3)} m` : u === 'Pa' ? `${v.toFixed(0)} Pa` : v.toPrecision(4));
  }
  const rows = [];
  for (let i = 0; i < cells.length; i += 4) rows.push(cells.slice(i, i + 4));
  return rows;
}

export class Hud {
  constructor(page) {
    this.page = page;
    this.fps = 0;
    this.count = 0;
    this.t0 = performance.now();
    this.server = null;       // the last /api/stats answer
    this.serverAt = 0;
    this.probeKey = '';       // the names of the probes shown, joined
    this.probeUnits = {};     // name -> unit, from GET /api/probes
  }

  // Polls /api/stats (same origin) every 2 s while connected and visible.
  async poll() {
    if (this.page.conn.connected && !document.hidden) {
      try {
        const res = await fetch(apiPath('/stats'), { signal: AbortSignal.timeout(3000), cache: 'no-store' });
        if (res.ok) { this.server = await res.json(); this.serverAt = performance.now(); }
      } catch { /* next time */ }
    }
    setTimeout(() => this.poll(), 2000);
  }

  // A hello: the interaction radius.
  fromHello(h) {
    $('hud-h').textContent = Number.isFinite(h.h) ? `${h.h.toPrecision(3)} m` : '–';
    $('hud-h').title = Number.isFinite(h.h) ? `interaction radius h = ${h.h} m; particles about ${(h.h / 2.1).toPrecision(2)} m apart` : '';
  }

  // One animation frame drawn at `now`.
  frameDrawn(now) {
    this.count++;
    if (now - this.t0 < 500) return;
    this.fps = this.count * 1000 / (now - this.t0);
    this.count = 0;
    this.t0 = now;
    this.update(now);
  }

  update(now) {
    const { conn, panel, newest, hello } = this.page;
    const r = this.page.stats.rates(now);
    const fresh = this.server && now - this.serverAt < 15000;
    if (fresh) {
      r.tickHz = this.server.paused ? 0 : this.server.tick_hz_actual;
      r.realtime = this.server.paused ? 0 : this.server.realtime_ratio;
    }
    $('hud-fps').textContent = fmt(this.fps, 0);
    $('hud-tick').textContent = fmt(r.tickHz, 1, ' Hz');
    $('hud-rt').textContent = fmt(r.realtime, 2, '×');
    $('hud-particles').textContent = newest ? String(newest.f.n) : '–';
    this._detail(newest?.f, r);
    // received: kbit/s, frames per second received, bits per particle of the last frame
    const st = this.page.decoder;
    $('hud-kbs').textContent = `${fmt((r.bytesPerS * 8) / 1000, 0, ' kbit/s')} · ${fmt(r.framesPerS, 0, '/s')}` +
      (st && st.bits ? ` · ${st.bits.toFixed(1)} bit/p` : '') +
      (st && st.pacer?.stride > 1 ? ` · 1/${st.pacer.stride}` : '');
    $('hud-kbs').title = st ? `frames decoded ${st.inWorker ? `in ${st.bandWorkers > 1 ? `${st.bandWorkers} workers, in bands` : 'a worker'} (${st.decoder === 'wasm' ? 'WebAssembly' : 'no decoder loaded'})` : 'on the main thread'}; keyframes ${st.keys}, refused ${st.refused}` +
      (st.pacer?.stride > 1 ? `; the decoder (median ${st.pacer.median().toFixed(0)} ms a frame) takes every ${st.pacer.stride === 2 ? '2nd' : '4th'} frame` : '') : '';
    $('hud-rtt').textContent = conn.lastRtt === null ? '–' : `${conn.lastRtt.toFixed(1)} ms`;
    $('hud-scene').textContent = hello ? `${$('scene').value}${panel.paused ? ' (paused)' : ''}` : '–';
    $('hud-solver').textContent = panel.solver.current || '–';
    $('hud-time').textContent = newest ? `${newest.f.time.toFixed(1)} s` : '–';
    this._temperatures(newest?.f);
    this._probes(newest?.f?.probes);
    // Users connected (the server's count; until it answers, those showing a cursor).
    const others = this.page.cursors.filter((c) => c.id !== this.page.myId && c.pos).length;
    $('hud-users').textContent = !conn.connected ? '–' : fresh ? String(this.server.clients) : String(1 + others);
  }

  // The tier of detail the link gets (PROTOCOL.md "Tiers of detail"): "every
  // particle, 7 mm steps" or "1 in 4 particles, 27 mm steps", and the link's
  // rate as received.
  _detail(f, r) {
    const el = $('hud-detail');
    if (!el) return;
    const step = f?.lod ? f.lod.step : this.page.hello?.frame_step;
    const mm = Number.isFinite(step) ? `, ${(step * 1000).toFixed(step < 0.01 ? 1 : 0)} mm steps` : '';
    const what = !f ? '–' : f.lod ? `1 in ${f.lod.keep} particles${mm}` : `every particle${mm}`;
    el.textContent = `${what} · ${fmt((r.bytesPerS * 8) / 1000, 0, ' kbit/s')}`;
    el.title = f?.lod ? 'the link is too slow for every particle of every frame: the server sends a subset on a coarser grid (drawn larger); tick "full detail" for every particle in fewer frames' : 'every particle at the stream\'s precision';
  }

  // The newest frame's probes (name -> value), two to a row; none: hidden.
  _probes(probes) {
    const names = probes ? Object.keys(probes) : [];
    $('hud-probes').classList.toggle('hidden', names.length === 0);
    const key = names.join('\n');
    if (key !== this.probeKey) {
      this.probeKey = key;
      this.probeUnits = {};
      if (names.length) this._probeUnits(key);
    }
    $('hud-probes-table').replaceChildren(...probeRows(probes, this.probeUnits).map((row) => {
      const tr = document.createElement('tr');
      for (const text of row) { const td = document.createElement('td'); td.textContent = text; tr.append(td); }
      return tr;
    }));
  }

  // Each probe's unit (GET /api/probes), kept while the set is still `key`.
  async _probeUnits(key) {
    try {
      const res = await fetch(apiPath('/probes'), { signal: AbortSignal.timeout(3000), cache: 'no-store' });
      if (!res.ok) return;
      const j = await res.json();
      if (key !== this.probeKey) return;
      for (const q of j.probes || []) this.probeUnits[q.name] = q.unit;
    } catch { /* shown without units until the set changes */ }
  }

  // The newest frame's coldest and hottest particle (one pass over n bytes,
  // twice a second), and on the legend.
  _temperatures(f) {
    const tr = f?.temp ? byteRange(f.temp, f.n) : null;
    const range = tr ? { min: f.tempLo + tr.min, max: f.tempLo + tr.max } : null;
    $('hud-temp').textContent = !range ? '–' : range.min === range.max ? `${range.min} °C` : `${range.min} to ${range.max} °C`;
    if (this.page.panel.colour === 'temperature') this.page.panel.showTemperatures(range, f?.tempLo, f?.tempHi);
  }
}
