// heat.js - the heat tool (PROTOCOL.md `heat`): while the pointer is held on
// the fluid the page sends `heat` at the picked point about 8 times a second,
// each lasting longer than the gap to the next (the server keeps one heat tool
// per client and restarts it on every command), so the heating is continuous
// while held, also on a page whose timers run late (the duration stretches to
// twice the last gap, up to 1 s); letting go sends a zero-rate `heat` that
// ends it at once.  The Cool tool is the same with the rate's sign flipped.
// Rate, radius and duration are clamped to the server's limits (hello.limits;
// the protocol's until a hello arrives).  HeatTool is pure: the caller
// passes the clock and the picked point; HeatControl runs it on the page.
import { cmd } from '../protocol.js';
import { DEFAULT_LIMITS, heatRanges } from '../limits.js';
import { clampToBox } from '../picking.js';

export const HEAT_DEFAULTS = {
  rate: 150,          // K/s at the centre
  radius: 0.3,        // m
  duration: 0.3,      // s each command lasts (at least)
  maxDuration: 1,     // s, when the page's timer runs late
  intervalMs: 125,    // how often the page sends while held (8 Hz)
  minGapMs: 100,      // never more often than this (the protocol asks for 0.1-0.2 s)
};

export class HeatTool {
  constructor(opts = {}, limits = DEFAULT_LIMITS) {
    Object.assign(this, HEAT_DEFAULTS, opts);
    this.setLimits(limits);
    this.active = false;
    this.sign = 1;             // +1 heat, -1 cool
    this.lastSend = -Infinity;
    this.sent = 0;             // commands built since the page loaded
    this.lastPoint = null;
  }

  // The server's limits (readLimits of a hello).
  setLimits(limits) { this.ranges = heatRanges(limits); }

  // The pointer went down with the Heat (sign +1) or Cool (-1) tool.
  begin(sign = 1) { this.active = true; this.sign = sign < 0 ? -1 : 1; this.lastSend = -Infinity; this.lastPoint = null; }

  // The pointer went up: the command that stops the heating now (a zero
  // rate for an instant where the tool last was), or null if none was sent.
  end() {
    const p = this.active ? this.lastPoint : null;
    this.active = false;
    this.lastPoint = null;
    return p ? cmd.heat(p, this.radius, 0, this.ranges.duration[0], this.ranges) : null;
  }

  // The command for `point` with the tool's settings (clamped to the
  // server's ranges), lasting `duration` s.
  command(point, duration = this.duration) {
    const rate = Math.min(Math.abs(Number(this.rate) || 0), this.ranges.rate[1]);
    return cmd.heat(point, this.radius, this.sign * rate, duration, this.ranges);
  }

  // Called on the page's timer with the world point under the pointer on the
  // fluid (null when the pointer is not over the fluid): the command to send
  // now, or null (not held, not on the fluid, or too soon after the last).
  tick(now, point) {
    if (!this.active || !point) return null;
    const gap = now - this.lastSend;
    if (gap < this.minGapMs) return null;
    this.lastSend = now;
    this.lastPoint = point;
    this.sent++;
    // Last longer than twice the gap just seen, in case the next one is as late.
    const d = Number.isFinite(gap) ? Math.min(this.maxDuration, Math.max(this.duration, 2 * gap / 1000)) : this.duration;
    return this.command(point, Number(d.toFixed(3)));
  }
}

// The tool on the page: held on the fluid, a `heat` command every 125 ms from
// a timer (the draw loop can run at a few frames a second in software WebGL).
// page: {conn, panel, pick(ndc), bounds(), toast(text, err)}.
export class HeatControl {
  constructor(page) {
    this.page = page;
    this.tool = new HeatTool();
    this.timer = null;
    this.ndc = null;
    this.errorAt = 0;
    this.lastReply = null;
  }

  start(ndc, sign) {
    this.ndc = ndc;
    this.tool.begin(sign);
    clearInterval(this.timer);
    this.timer = setInterval(() => this.tick(), this.tool.intervalMs);
    this.tick();
  }

  end() {
    clearInterval(this.timer);
    this.timer = null;
    const stop = this.tool.end();
    if (stop && this.page.conn.connected) this.page.conn.send(stop);
  }

  tick() {
    const { conn, panel } = this.page;
    if (!conn.connected || !this.ndc || !this.tool.active) return;
    this.tool.rate = panel.heatRate;
    this.tool.radius = panel.heatRadius;
    const p = this.page.pick(this.ndc);
    const c = this.tool.tick(performance.now(), p?.onFluid ? clampToBox(p.point, this.page.bounds()) : null);
    if (!c) return;
    conn.send(c).then((r) => {
      this.lastReply = r;
      // One message per couple of seconds while refused (e.g. four others heating).
      if (!r.ok && performance.now() - this.errorAt > 2000) { this.errorAt = performance.now(); this.page.toast(`heat: ${r.error}`, true); }
    });
  }
}
