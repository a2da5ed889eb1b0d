// heat.js - the heat tool (PROTOCOL.md `heat`): while the pointer is held on
// the fluid the page sends `heat` at the picked point about 8 times a second,
// each lasting longer than the gap to the next (the server keeps one heat tool
// per client and restarts it on every command), so the heating is continuous
// while held, also on a page whose timers run late (the duration stretches to
// twice the last gap, up to 1 s); letting go sends a zero-rate `heat` that
// ends it at once.  The Cool tool is the same with the rate's sign flipped.
// Pure: the caller passes the clock and the picked point.
import { cmd, HEAT } from './protocol.js';

export const HEAT_DEFAULTS = {
  rate: 150,          // K/s at the centre
  radius: 0.3,        // m
  duration: 0.3,      // s each command lasts (at least)
  maxDuration: 1,     // s, when the page's timer runs late
  intervalMs: 125,    // how often the page sends while held (8 Hz)
  minGapMs: 100,      // never more often than this (the protocol asks for 0.1-0.2 s)
};

export class HeatTool {
  constructor(opts = {}) {
    Object.assign(this, HEAT_DEFAULTS, opts);
    this.active = false;
    this.sign = 1;             // +1 heat, -1 cool
    this.lastSend = -Infinity;
    this.sent = 0;             // commands built since the page loaded
    this.lastPoint = null;
  }

  // The pointer went down with the Heat (sign +1) or Cool (-1) tool.
  begin(sign = 1) { this.active = true; this.sign = sign < 0 ? -1 : 1; this.lastSend = -Infinity; this.lastPoint = null; }

  // The pointer went up: the command that stops the heating now (a zero
  // rate for an instant where the tool last was), or null if none was sent.
  end() {
    const p = this.active ? this.lastPoint : null;
    this.active = false;
    this.lastPoint = null;
    return p ? cmd.heat(p, this.radius, 0, HEAT.duration[0]) : null;
  }

  // The command for `point` with the tool's settings (clamped to the
  // protocol's ranges), lasting `duration` s.
  command(point, duration = this.duration) {
    const rate = Math.min(Math.abs(Number(this.rate) || 0), HEAT.rate[1]);
    return cmd.heat(point, this.radius, this.sign * rate, duration);
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
