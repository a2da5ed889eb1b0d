// panel.js - the control panel: tool, view, simulation and the material
// sliders bound to the server (every user's change moves everyone's sliders).
import { toSlider, fromSlider, formatValue, scaleOf, STEPS } from './sliders.js';
import { materialColour } from '../renderer/renderer.js';
import { SolverState } from '../solver.js';
import { legendGradient, TEMP_RANGE } from '../temperature.js';

const $ = (id) => document.getElementById(id);

export class Panel {
  // app: {send(cmd) -> Promise<reply>, cmd (builders), nameOf(id), toast(text, err)}
  constructor(app) {
    this.app = app;
    this.hello = null;
    this.materials = [];          // [{index, name, params: {name: value}}]
    this.active = 0;              // material shown
    this.dragging = new Set();    // "mat/param" being dragged here
    this.inputs = new Map();      // "mat/param" -> {range|check, out, row, info}
    this.sendTimers = new Map();
    this.tool = 'push';
    this.mode = 'particles';
    this.colour = 'material';
    this.colourAuto = false;      // the colour mode was chosen by the page (scene load), not the user
    this.colourForTool = false;   // ... or by picking the heat / cool tool
    this.paused = false;
    this.solver = new SolverState();
    this.legendRange = null;
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
    $('scene').addEventListener('change', () => this.loadScene());
    $('pause').addEventListener('click', () => this.togglePause());
    $('step').addEventListener('click', async (ev) => {
      const r = await this.app.send(this.app.cmd.step(ev.shiftKey ? 10 : 1));
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
    sel.disabled = st.options.length === 0;
  }

  // The solvers' descriptions (REST only) as the options' tooltips.
  _solverTitles() {
    fetch('/api/solvers', { signal: AbortSignal.timeout(5000) }).then((r) => (r.ok ? r.json() : null)).then((j) => {
      for (const sv of j?.solvers || []) {
        const o = [...$('solver').options].find((x) => x.value === sv.name);
        if (o && sv.doc) o.title = sv.doc;
      }
    }).catch(() => { /* tooltips are optional */ });
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

  async loadScene() {
    const name = $('scene').value;
    let n = Math.round(Number($('count').value) || 0);
    const cap = this.hello?.capacity || 0;
    if (cap && n > cap) { this.app.toast(`at most ${cap} particles on this server (--capacity)`, true); n = cap; $('count').value = cap; }
    const r = await this.app.send(this.app.cmd.loadScene(name, n));
    if (!r.ok) this.app.toast(`load_scene: ${r.error}`, true);
    else $('floor-plate').value = ''; /* the new scene's own heaters */
  }

  setPaused(p) {
    this.paused = !!p;
    $('pause').textContent = this.paused ? 'Resume' : 'Pause';
    $('step').disabled = !this.paused;
  }

  setScene(name, particles) {
    const sel = $('scene');
    if (name && sel.value !== name) sel.value = name;
    if (particles && document.activeElement !== $('count')) $('count').value = particles;
  }

  // A (re)synchronising hello: rebuild everything from it.
  fromHello(h) {
    this.hello = h;
    const sel = $('scene');
    sel.replaceChildren(...(h.scenes || []).map((s) => { const o = document.createElement('option'); o.value = o.textContent = s; return o; }));
    // Each scene's description (REST only) as the option's tooltip.
    fetch('/api/scenes', { signal: AbortSignal.timeout(5000) }).then((r) => (r.ok ? r.json() : null)).then((j) => {
      for (const sc of j?.scenes || []) {
        const o = [...sel.options].find((x) => x.value === sc.name);
        if (o) o.title = `${sc.doc} (default ${sc.default_particles} particles${sc.solver ? `; solver ${sc.solver}` : ''})`;
      }
    }).catch(() => { /* tooltips are optional */ });
    this.setScene(h.scene, h.particles);
    $('count').max = h.capacity || '';
    this.setPaused(h.paused);
    this.solver.fromHello(h);
    this._showSolver();
    this.materials = (h.materials || []).map((m) => ({ index: m.index, name: m.name, params: { ...m.params } }));
    if (this.active >= this.materials.length) this.active = 0;
    this._buildTabs();
    this._buildParams();
    $('mat-note').textContent = h.auth_required ? 'this server needs a token to change things (?token=… in the page address)' : '';
  }

  _buildTabs() {
    const tabs = $('mat-tabs');
    tabs.replaceChildren(...this.materials.map((m, i) => {
      const b = document.createElement('button');
      const c = materialColour(m.name, m.index).map((x) => Math.round(x * 255));
      b.innerHTML = `<span class="dot" style="background:rgb(${c})"></span>${m.name}`;
      b.dataset.material = m.name;
      b.className = i === this.active ? 'active' : '';
      b.addEventListener('click', () => { this.active = i; this._buildTabs(); this._buildParams(); });
      return b;
    }));
  }

  _buildParams() {
    const box = $('mat-params');
    this.inputs.clear();
    const m = this.materials[this.active];
    if (!m || !this.hello) { box.replaceChildren(); return; }
    const rows = [];
    for (const info of this.hello.params || []) {
      const key = `${m.name}/${info.name}`;
      const row = document.createElement('div');
      row.className = 'param';
      row.title = info.doc || '';
      const name = document.createElement('div');
      name.className = 'name';
      name.innerHTML = `<span></span><span class="unit"></span>`;
      name.firstChild.textContent = info.name.replace(/_/g, ' ');
      name.lastChild.textContent = info.flag ? '' : info.unit;
      row.append(name);
      // A huge range (Young's modulus, up to 1e9 Pa) gets a log slider and a
      // number box to type a value into.
      const typed = !info.flag && scaleOf(info.min, info.max) === 'log';
      const out = document.createElement(typed ? 'input' : 'output');
      if (typed) {
        Object.assign(out, { type: 'number', min: info.min, max: info.max, step: 'any', className: 'num' });
        out.setAttribute('aria-label', `${m.name} ${info.name} value`);
        out.addEventListener('change', () => {
          const typedValue = out.value.trim() === '' ? NaN : Number(out.value);
          if (!Number.isFinite(typedValue)) { this._show(m.name); return; }
          const val = Math.min(info.max, Math.max(info.min, typedValue));
          input.value = toSlider(val, info.min, info.max);
          this._send(m.name, info.name, val, true);
        });
      }
      const setOut = (val) => { if (typed) { if (document.activeElement !== out) out.value = String(val); } else out.textContent = formatValue(val); };
      const v = m.params[info.name] ?? info.min;
      let input;
      if (info.flag) {
        input = document.createElement('input');
        input.type = 'checkbox';
        input.checked = v >= 0.5;
        input.addEventListener('change', () => this._send(m.name, info.name, input.checked ? 1 : 0, true));
        out.textContent = '';
      } else {
        input = document.createElement('input');
        input.type = 'range';
        input.min = 0; input.max = STEPS; input.step = 1;
        input.value = toSlider(v, info.min, info.max);
        setOut(v);
        input.addEventListener('pointerdown', () => this.dragging.add(key));
        const end = () => this.dragging.delete(key);
        input.addEventListener('pointerup', end);
        input.addEventListener('pointercancel', end);
        input.addEventListener('input', () => {
          const val = fromSlider(Number(input.value), info.min, info.max);
          setOut(val);
          this._send(m.name, info.name, val, false);
        });
        input.addEventListener('change', () => {
          this.dragging.delete(key);
          this._send(m.name, info.name, fromSlider(Number(input.value), info.min, info.max), true);
        });
      }
      input.dataset.material = m.name;
      input.dataset.param = info.name;
      input.setAttribute('aria-label', `${m.name} ${info.name}`);
      row.append(input, out);
      rows.push(row);
      this.inputs.set(key, { input, out, row, info, setOut });
    }
    box.replaceChildren(...rows);
  }

  // Sends set_param, at most every 80 ms while a slider moves (the last
  // value always goes out).
  _send(material, param, value, now) {
    const key = `${material}/${param}`;
    let s = this.sendTimers.get(key);
    if (!s) { s = { value, timer: null, last: 0 }; this.sendTimers.set(key, s); }
    s.value = value;
    const fire = async () => {
      s.timer = null;
      s.last = performance.now();
      const r = await this.app.send(this.app.cmd.setParam(material, param, s.value));
      if (!r.ok) { this.app.toast(`${param}: ${r.error}`, true); this._show(material); }
    };
    if (now) { clearTimeout(s.timer); fire(); return; }
    if (s.timer) return;
    s.timer = setTimeout(fire, Math.max(0, 80 - (performance.now() - s.last)));
  }

  // A `param` broadcast: store the values and move the sliders.
  onParam(msg, myId) {
    const m = this.materials.find((x) => x.name === msg.material || x.index === msg.index);
    if (!m) return;
    const before = { ...m.params };
    Object.assign(m.params, msg.params);
    if (this.materials[this.active] !== m) return;
    for (const [name, v] of Object.entries(msg.params)) {
      const e = this.inputs.get(`${m.name}/${name}`);
      if (!e) continue;
      if (e.info.flag) e.input.checked = v >= 0.5;
      else if (!this.dragging.has(`${m.name}/${name}`)) {
        e.input.value = toSlider(v, e.info.min, e.info.max);
        e.setOut(v);
      }
      if (msg.by !== myId && before[name] !== v) {
        e.row.classList.remove('remote');
        void e.row.offsetWidth;     // restart the animation
        e.row.classList.add('remote');
        e.row.title = `${e.info.doc || name} — changed by ${msg.by ? this.app.nameOf(msg.by) : 'the REST API'}`;
      }
    }
  }

  _show(material) {
    if (this.materials[this.active]?.name === material) this._buildParams();
  }

  currentMaterial() { return this.materials[this.active]?.name || 'water'; }
}
