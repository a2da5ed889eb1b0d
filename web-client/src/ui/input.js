// input.js - mouse and touch on the canvas: the orbit camera (right drag,
// the Orbit tool, two fingers), zoom (wheel, pinch), pan (shift / middle
// drag), and the current tool's drags (push, heat, cool), reported to the
// app as pointer positions (onPush* whatever the tool).

export class Input {
  // canvas, camera, handlers: {tool() -> 'push'|'heat'|'cool'|'orbit', onHover(ndc|null),
  // onPushStart(ndc), onPushMove(ndc), onPushEnd(), onCamera()}
  constructor(canvas, camera, h) {
    this.c = canvas; this.cam = camera; this.h = h;
    this.pointers = new Map();     // id -> {x, y}
    this.mode = null;              // 'push' | 'orbit' | 'pan' | 'pinch'
    this.pinch = null;
    const on = (t, f, o) => canvas.addEventListener(t, f, o);
    on('pointerdown', (e) => this._down(e));
    on('pointermove', (e) => this._move(e));
    on('pointerup', (e) => this._up(e));
    on('pointercancel', (e) => this._up(e));
    on('pointerleave', (e) => { if (!this.pointers.size) this.h.onHover?.(null); });
    on('wheel', (e) => { e.preventDefault(); this.cam.zoom(Math.exp(Math.sign(e.deltaY) * Math.min(Math.abs(e.deltaY), 200) * 0.0015)); this.h.onCamera?.(); }, { passive: false });
    on('contextmenu', (e) => e.preventDefault());
  }

  ndc(e) {
    const r = this.c.getBoundingClientRect();
    return [((e.clientX - r.left) / r.width) * 2 - 1, 1 - ((e.clientY - r.top) / r.height) * 2];
  }

  _down(e) {
    this.c.focus();
    try { this.c.setPointerCapture(e.pointerId); } catch { /* synthetic or already gone */ }
    this.pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (this.pointers.size === 2) {               // second finger: leave the tool, pinch / orbit
      if (this.mode === 'push') this.h.onPushEnd?.();
      const [a, b] = [...this.pointers.values()];
      this.mode = 'pinch';
      this.pinch = { d: Math.hypot(a.x - b.x, a.y - b.y), mx: (a.x + b.x) / 2, my: (a.y + b.y) / 2 };
      return;
    }
    if (this.pointers.size > 2) return;
    if (e.button === 2 || (e.button === 0 && e.altKey)) this.mode = 'orbit';
    else if (e.button === 1 || (e.button === 0 && e.shiftKey)) this.mode = 'pan';
    else if (e.button === 0) this.mode = this.h.tool() === 'orbit' ? 'orbit' : 'push';
    else this.mode = null;
    if (this.mode === 'push') this.h.onPushStart?.(this.ndc(e));
    e.preventDefault();
  }

  _move(e) {
    const p = this.pointers.get(e.pointerId);
    if (!p) { if (e.pointerType === 'mouse') this.h.onHover?.(this.ndc(e)); return; }
    const dx = e.clientX - p.x, dy = e.clientY - p.y;
    p.x = e.clientX; p.y = e.clientY;
    const H = this.c.clientHeight || 1;
    if (this.mode === 'pinch' && this.pointers.size >= 2) {
      const [a, b] = [...this.pointers.values()];
      const d = Math.hypot(a.x - b.x, a.y - b.y), mx = (a.x + b.x) / 2, my = (a.y + b.y) / 2;
      if (this.pinch.d > 0 && d > 0) this.cam.zoom(this.pinch.d / d);
      this.cam.orbit((mx - this.pinch.mx) / H * 3, (my - this.pinch.my) / H * 3);
      this.pinch = { d, mx, my };
      this.h.onCamera?.();
    } else if (this.mode === 'orbit') {
      this.cam.orbit(dx / H * 3, dy / H * 3);
      this.h.onCamera?.();
    } else if (this.mode === 'pan') {
      this.cam.pan(dx / H, dy / H);
      this.h.onCamera?.();
    } else if (this.mode === 'push') {
      this.h.onPushMove?.(this.ndc(e));
    }
    if (e.pointerType === 'mouse' || this.mode === 'push') this.h.onHover?.(this.ndc(e));
  }

  _up(e) {
    if (!this.pointers.delete(e.pointerId)) return;
    if (this.mode === 'push') this.h.onPushEnd?.();
    if (this.pointers.size === 0) {
      this.mode = null;
      if (e.pointerType !== 'mouse') this.h.onHover?.(null);
    } else if (this.mode === 'pinch' && this.pointers.size === 1) {
      this.mode = 'orbit';                       // one finger left: keep orbiting, never push
    }
  }
}
