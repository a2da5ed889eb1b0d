// cursor.js - this page's presence: where the pointer meets the fluid, sent
// as a `cursor` (at most 20 a second, answered only when refused) so the
// others see it, and hidden again when the pointer leaves.
// page: {conn, pick(ndc), bounds()}.
import { cmd } from '../protocol.js';
import { clampToBox } from '../picking.js';

export class CursorTool {
  constructor(page) {
    this.page = page;
    this.ndc = null;          // the pointer, or null off the canvas
    this.changed = false;
    this.lastSent = 0;
    this.shown = false;       // the others see our cursor
    this.pos = null;          // world point under the pointer (clamped to the box)
    this.onFluid = false;
  }

  hover(ndc) { this.ndc = ndc; this.changed = true; }

  tick(now) {
    if (!this.changed || now - this.lastSent < 50) return;
    this.changed = false;
    this.lastSent = now;
    const { conn } = this.page;
    const p = this.ndc ? this.page.pick(this.ndc) : null;
    this.pos = p ? clampToBox(p.point, this.page.bounds()) : null;
    this.onFluid = !!p?.onFluid;
    if (this.pos) { conn.send(cmd.cursor(this.pos)); this.shown = true; }
    else if (this.shown) { conn.send(cmd.cursor(null)); this.shown = false; }
  }

  // Where to draw our own marker (null: the pointer is off the canvas).
  get marker() { return this.pos && this.ndc ? this.pos : null; }
}
