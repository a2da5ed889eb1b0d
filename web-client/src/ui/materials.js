// materials.js - the material sliders: one tab per material, a row per live
// parameter (hello.params), bound to the server (every user's change moves
// everyone's sliders, and the row flashes naming who changed it).  Only the
// running solver's parameters show (rows of the others are hidden, not
// removed); all of them while its set is unknown.
import { toSlider, fromSlider, formatValue, scaleOf, STEPS } from './sliders.js';
import { materialColour } from '../renderer/renderer.js';

const $ = (id) => document.getElementById(id);

export class MaterialSliders {
  // app: {send(cmd) -> Promise<reply>, cmd (builders), nameOf(id), toast(text, err)}
  constructor(app) {
    this.app = app;
    this.params = [];             // hello.params
    this.materials = [];          // [{index, name, params: {name: value}}]
    this.active = 0;              // material shown
    this.dragging = new Set();    // "mat/param" being dragged here
    this.inputs = new Map();      // "mat/param" -> {input, out, row, info, setOut}
    this.sendTimers = new Map();
    this.shownSet = null;         // the parameter names shown, null: all
  }

  // A (re)synchronising hello.
  fromHello(h) {
    this.params = h.params || [];
    this.materials = (h.materials || []).map((m) => ({ index: m.index, name: m.name, params: { ...m.params } }));
    if (this.active >= this.materials.length) this.active = 0;
    this._buildTabs();
    this._buildParams();
  }

  // Shows only the parameters named in `set` (a Set; null: all of them).
  showOnly(set) {
    this.shownSet = set;
    for (const e of this.inputs.values()) e.row.classList.toggle('hidden', !!set && !set.has(e.info.name));
  }

  currentMaterial() { return this.materials[this.active]?.name || 'water'; }

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
    if (!m) { box.replaceChildren(); return; }
    box.replaceChildren(...this.params.map((info) => this._row(m, info)));
    this.showOnly(this.shownSet);
  }

  // One parameter's row: its name and unit, a checkbox (flags) or a slider,
  // and the value (a number box to type into on huge ranges).
  _row(m, info) {
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
    if (typed) this._numberBox(out, () => input, m, info);
    const setOut = (val) => { if (typed) { if (document.activeElement !== out) out.value = String(val); } else out.textContent = formatValue(val); };
    const v = m.params[info.name] ?? info.min;
    const input = info.flag ? this._checkbox(m, info, v) : this._slider(m, info, v, key, setOut);
    if (info.flag) out.textContent = '';
    input.dataset.material = m.name;
    input.dataset.param = info.name;
    input.setAttribute('aria-label', `${m.name} ${info.name}`);
    row.append(input, out);
    this.inputs.set(key, { input, out, row, info, setOut });
    return row;
  }

  _checkbox(m, info, v) {
    const input = document.createElement('input');
    input.type = 'checkbox';
    input.checked = v >= 0.5;
    input.addEventListener('change', () => this._send(m.name, info.name, input.checked ? 1 : 0, true));
    return input;
  }

  _slider(m, info, v, key, setOut) {
    const input = document.createElement('input');
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
    return input;
  }

  // The value box of a huge range; slider() is the row's slider.
  _numberBox(out, slider, m, info) {
    Object.assign(out, { type: 'number', min: info.min, max: info.max, step: 'any', className: 'num' });
    out.setAttribute('aria-label', `${m.name} ${info.name} value`);
    out.addEventListener('change', () => {
      const typedValue = out.value.trim() === '' ? NaN : Number(out.value);
      if (!Number.isFinite(typedValue)) { this._show(m.name); return; }
      const val = Math.min(info.max, Math.max(info.min, typedValue));
      slider().value = toSlider(val, info.min, info.max);
      this._send(m.name, info.name, val, true);
    });
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
}
