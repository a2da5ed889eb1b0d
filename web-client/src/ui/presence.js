// presence.js - the name labels of everyone's cursors, placed over the canvas.
import { project } from '../math.js';

export class Presence {
  constructor(layer, nameOf) { this.layer = layer; this.nameOf = nameOf; this.labels = new Map(); }

  // cursors: [{id, colour, pos}] ; viewProj: the camera's matrix.
  update(cursors, viewProj, width, height) {
    const seen = new Set();
    for (const c of cursors) {
      if (!c.pos) continue;
      const p = project(viewProj, c.pos);
      if (p[3] <= 0 || Math.abs(p[0]) > 1.2 || Math.abs(p[1]) > 1.2) continue;
      seen.add(c.id);
      let el = this.labels.get(c.id);
      if (!el) {
        el = document.createElement('div');
        el.className = 'cursor-label';
        el.dataset.id = String(c.id);
        this.layer.append(el);
        this.labels.set(c.id, el);
      }
      const name = c.own ? `${this.nameOf(c.id)} (you)` : this.nameOf(c.id);
      if (el.textContent !== name) el.textContent = name;
      if (el.dataset.colour !== c.colour) {
        el.style.background = c.colour;
        el.style.color = luminance(c.colour) > 0.2 ? '#111' : '#fff';
        el.dataset.colour = c.colour;
      }
      el.style.left = `${((p[0] + 1) / 2 * width).toFixed(1)}px`;
      el.style.top = `${((1 - p[1]) / 2 * height).toFixed(1)}px`;
    }
    for (const [id, el] of this.labels) if (!seen.has(id)) { el.remove(); this.labels.delete(id); }
  }
}

// Relative luminance of #rrggbb (0..1), to pick a readable label colour.
export function luminance(hex) {
  const m = /^#?([0-9a-f]{6})$/i.exec(hex || '');
  if (!m) return 1;
  const v = parseInt(m[1], 16);
  const lin = (c) => { c /= 255; return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * lin(v >> 16 & 255) + 0.7152 * lin(v >> 8 & 255) + 0.0722 * lin(v & 255);
}
