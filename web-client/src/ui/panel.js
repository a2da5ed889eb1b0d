// panel.js - the control panel: tool, view (with the temperature legend),
// simulation (scene, solver, pause, step, emitters, floor plate) and bodies;
// the material sliders (materials.js) show the running solver's parameters.
import { MaterialSliders } from './materials.js';
import { SolverState } from '../solver.js';
import { legendGradient, TEMP_RANGE } from '../temperature.js';
import { apiPath } from '../room.js';
import { roleLocked } from './roles.js';

const $ = (id) => document.getElementById(id);

export class Panel {
  // app: {send(cmd) -> Promise<reply>, cmd (builders), limits (the server's),
  // nameOf(id), toast(text, err), and the actions: dropBody(shape),
  // clearBodies(), setEmitter(on), resetView(), onTool(tool)}
  constructor(app) {
    this.app = app;
    this.hello = null;
    this.sliders = new MaterialSliders(app);
    this.tool = 'push';
    this.mode = 'particles';
    this.colour = 'material';
    this.colourAuto = false;      // the colour mode was chosen by the page (scene load), not the user
    this.countTyped = false;      // the count box holds a size the user typed, not one the page filled in
    this.colourForTool = false;   // ... or by picking the heat / cool tool
    this.paused = false;
    this.solver = new SolverState();
    this.legendRange = null;
    this.solverDoc = null;        // the last GET /api/solvers answer
    this._wire();
  }

  get pushRadius() { return Number($('push-radius').value); }
  get pushStrength() { return Number($('push-strength').value); }
  get heatRadius() { return Number($('heat-radius').value); }
  get heatRate() { return Number($('heat-rate').value); }
  get speedMax() { return Number($('speed-max').value); }

  _wire() {
    const out = (id, fmt) => { const i = $(id), o = $(`${id}-out`); const f = () => { o.textContent = fmt(Number(i.value)); }; i.addEventListener('input', f); f(); };
    out('push-radius', (v) => `${v.toFixed(2)} m`);
    out('push-strength', (v) => `${v.toFixed(1)} m/s`);
    out('speed-max', (v) => `${v.toFixed(1)} m/s`);
    out('heat-radius', (v) => `${v.toFixed(2)} m`);
    out('heat-rate', (v) => `${v.toFixed(0)} K/s`);
    out('body-density', (v) => `${v.toFixed(0)} kg/m³`);
    for (const shape of ['sphere', 'box', 'capsule']) $(`add-${shape}`).addEventListener('click', () => this.app.dropBody?.(shape));
    $('clear-bodies').addEventListener('click', () => this.app.clearBodies?.());
    for (const r of document.querySelectorAll('input[name=tool]')) r.addEventListener('change', () => this.setTool(r.value));
    for (const r of document.querySelectorAll('input[name=mode]')) r.addEventListener('change', () => { this.mode = r.value; });
    for (const r of document.querySelectorAll('input[name=colour]')) r.addEventListener('change', () => this.setColour(r.value));
    $('solver').addEventListener('change', () => this.requestSolver($('solver').value));
    this._buildLegend(TEMP_RANGE[0], TEMP_RANGE[1]);
    $('side-toggle').addEventListener('click', () => $('side').classList.toggle('collapsed'));
    // Small screens start with the fluid, not the controls.
    if (window.innerWidth < 700) $('side').classList.add('collapsed');
    $('reset-view').addEventListener('click', () => this.app.resetView?.());
    $('load').addEventListener('click', () => this.loadScene());
    // Picking a scene loads it with the count the user typed, or at its own
    // default size where the box holds what the page filled in (the size the
    // last scene was loaded with, which means nothing for another scene: an
    // MPS scene's 2,500 for a Clavet dam break, or 20,000 for an MPS tank).
    $('count').addEventListener('input', () => { this.countTyped = true; });
    $('scene').addEventListener('change', () => this.loadScene(!this.countTyped));
    $('pause').addEventListener('click', () => this.togglePause());
    $('step').addEventListener('click', async (ev) => {
      const r = await this.app.send(this.app.cmd.step(ev.shiftKey ? 10 : 1, this.app.limits));
      if (!r.ok) this.app.toast(`step: ${r.error}`, true);
    });
    $('emitter').addEventListener('change', (ev) => this.app.setEmitter?.(ev.target.checked));
    $('floor-plate').addEventListener('change', async (ev) => {
      const v = ev.target.value;
      if (v === '') return;
      const c = v === 'off' ? this.app.cmd.heaterEnable(0, false)
        : this.app.cmd.heater(0, { kind: 'floor', radius: 0.2, rate: 2, temperature: Number(v) });
      const r = await this.app.send(c);
      if (!r.ok) this.app.toast(`floor: ${r.error}`, true);
      else if (this.colour === 'material') this.setColour('temperature');
    });
    $('scene-emitter').addEventListener('change', async (ev) => {
      const r = await this.app.send(this.app.cmd.emitterEnable(0, ev.target.checked));
      if (!r.ok) { this.app.toast(`scene jet: ${r.error}`, true); ev.target.checked = !ev.target.checked; }
    });
  }

  setTool(t) {
    this.tool = t;
    const r = document.querySelector(`input[name=tool][value=${t}]`);
    if (r) r.checked = true;
    const heat = t === 'heat' || t === 'cool';
    for (const el of document.querySelectorAll('.tool-push')) el.classList.toggle('hidden', heat);
    for (const el of document.querySelectorAll('.tool-heat')) el.classList.toggle('hidden', !heat);
    // Heating is seen in temperature colours: the heat tools switch to them
    // from material colours, and the other tools switch back.
    if (heat && this.colour === 'material') { this.setColour('temperature'); this.colourForTool = true; }
    else if (!heat && this.colourForTool && this.colour === 'temperature') this.setColour('material');
    this.app.onTool?.(t);
  }

  // Colour by 'material', 'speed' or 'temperature'; auto: chosen by the page
  // (a scene whose particles span temperatures), so the next scene may undo it.
  setColour(c, auto = false) {
    this.colour = c;
    this.colourAuto = auto;
    this.colourForTool = false;
    const r = document.querySelector(`input[name=colour][value=${c}]`);
    if (r) r.checked = true;
    $('temp-legend').classList.toggle('hidden', c !== 'temperature');
  }

  // The legend's gradient and ticks for temperatures lo..hi °C.
  _buildLegend(lo, hi) {
    if (this.legendRange && this.legendRange[0] === lo && this.legendRange[1] === hi) return;
    this.legendRange = [lo, hi];
    $('temp-bar').style.background = legendGradient(lo, hi);
    const ticks = [lo, 0, 30, 100, hi].filter((t, i, a) => t >= lo && t <= hi && a.indexOf(t) === i);
    $('temp-ticks').replaceChildren(...ticks.map((t) => {
      const el = document.createElement('span');
      el.textContent = String(t);
      el.style.left = `${((t - lo) / (hi - lo) * 100).toFixed(1)}%`;
      return el;
    }));
  }

  // The newest frame's temperatures (°C, null when unknown) on the legend.
  showTemperatures(range, lo, hi) {
    if (lo !== undefined && hi > lo) this._buildLegend(lo, hi);
    const span = $('temp-span');
    if (!range || !this.legendRange) { span.style.display = 'none'; return; }
    const [a, b] = this.legendRange;
    const x = (t) => Math.min(100, Math.max(0, (t - a) / (b - a) * 100));
    span.style.display = 'block';
    span.style.left = `calc(${x(range.min).toFixed(2)}% - 2px)`;
    span.style.width = `calc(${(x(range.max) - x(range.min)).toFixed(2)}% + 4px)`;
  }

  // --- solver ---------------------------------------------------------------
  _showSolver() {
    const sel = $('solver'), st = this.solver;
    const have = [...sel.options].map((o) => o.value);
    if (have.join() !== st.options.join()) {
      sel.replaceChildren(...st.options.map((s) => { const o = document.createElement('option'); o.value = o.textContent = s; return o; }));
      this._solverTitles();
    }
    if (sel.value !== st.shown) sel.value = st.shown;
    sel.disabled = st.options.length === 0 || roleLocked(sel);
    this.sliders.showOnly(st.paramSet);
  }

  // The solvers' descriptions as the options' tooltips (from the last GET /api/solvers).
  _solverTitles() {
    for (const sv of this.solverDoc?.solvers || []) {
      const o = [...$('solver').options].find((x) => x.value === sv.name);
      if (o && sv.doc) o.title = sv.doc;
    }
  }

  // After a hello: each solver's parameter set and description (REST only).
  async _fetchSolvers() {
    this.solverDoc = await this.solver.fetchSets();
    this._solverTitles();
    this._showSolver();
  }

  // A `solver` or `scene` broadcast, or a hello: show what runs.
  onSolver(m) { const changed = this.solver.onBroadcast(m); this._showSolver(); return changed; }

  async requestSolver(name) {
    const c = this.solver.request(name);
    this._showSolver();
    if (!c) return null;
    const r = await this.app.send(c);
    this.solver.onReply(name, r);
    if (!r.ok) this.app.toast(`solver: ${r.error}`, true);
    this._showSolver();
    return r;
  }
  setMode(m) { this.mode = m; const r = document.querySelector(`input[name=mode][value=${m}]`); if (r) r.checked = true; }

  async togglePause() {
    const r = await this.app.send(this.paused ? this.app.cmd.resume() : this.app.cmd.pause());
    if (!r.ok) this.app.toast(`${r.cmd || 'pause'}: ${r.error}`, true);
  }

  // Loads the picked scene with the count box's size, or (sceneDefault) at
  // the scene's own default (0 asks the server for it).
  async loadScene(sceneDefault = false) {
    const name = $('scene').value;
    let n = sceneDefault ? 0 : Math.round(Number($('count').value) || 0);
    const cap = this.hello?.capacity || 0;
    if (cap && n > cap) { this.app.toast(`at most ${cap} particles on this server (--capacity)`, true); n = cap; $('count').value = cap; }
    const r = await this.app.send(this.app.cmd.loadScene(name, n));
    if (!r.ok) this.app.toast(`load_scene: ${r.error}`, true);
    else $('floor-plate').value = ''; /* the new scene's own heaters */
  }

  setPaused(p) {
    this.paused = !!p;
    $('pause').textContent = this.paused ? 'Resume' : 'Pause';
    $('step').disabled = !this.paused || roleLocked($('step'));
  }

  // The count box shows the size the scene was loaded with (hello's and the
  // scene broadcast's scene_particles), so Load gives the same world again;
  // the particles now where the server does not know it (an older save).
  setScene(name, particles) {
    const sel = $('scene');
    if (name && sel.value !== name) sel.value = name;
    if (particles && document.activeElement !== $('count')) {
      $('count').value = particles;
      this.countTyped = false;
    }
  }

  // A (re)synchronising hello: rebuild everything from it.
  fromHello(h) {
    this.hello = h;
    const sel = $('scene');
    sel.replaceChildren(...(h.scenes || []).map((s) => { const o = document.createElement('option'); o.value = o.textContent = s; return o; }));
    // Each scene's description (REST only) as the option's tooltip.
    fetch(apiPath('/scenes'), { signal: AbortSignal.timeout(5000) }).then((r) => (r.ok ? r.json() : null)).then((j) => {
      for (const sc of j?.scenes || []) {
        const o = [...sel.options].find((x) => x.value === sc.name);
        if (o) o.title = `${sc.doc} (default ${sc.default_particles} particles${sc.solver ? `; solver ${sc.solver}` : ''})`;
      }
    }).catch(() => { /* tooltips are optional */ });
    this.setScene(h.scene, h.scene_particles || h.particles);
    $('count').max = h.capacity || '';
    this.setPaused(h.paused);
    this._limitSliders(this.app.limits);
    this.solver.fromHello(h);
    this._showSolver();
    this._fetchSolvers();
    this.sliders.fromHello(h);
    this.sliders.showOnly(this.solver.paramSet);
    $('mat-note').textContent = h.auth_required ? 'this server needs a token to change things (?token=… in the page address)' : '';
  }

  // The tool sliders reach at most the server's limits (hello.limits).
  _limitSliders(lim) {
    const keys = { 'push-radius': 'push_radius', 'push-strength': 'push_strength', 'heat-radius': 'heat_radius', 'heat-rate': 'heat_rate' };
    for (const [id, key] of Object.entries(keys)) {
      const el = $(id);
      if (!el.dataset.max) el.dataset.max = el.max;          // the page's own end
      const max = String(Math.min(Number(el.dataset.max), lim[key]));
      if (el.max !== max) { el.max = max; el.dispatchEvent(new Event('input')); }
    }
  }

  // A `param` broadcast.
  onParam(msg, myId) { this.sliders.onParam(msg, myId); }

  currentMaterial() { return this.sliders.currentMaterial(); }
}
