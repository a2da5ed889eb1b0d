// sliders.js - the mapping between a range input's position (0..1000) and a
// parameter value: linear on narrow ranges, a cubic curve on wide ones (small
// values, where most defaults sit, get most of the travel) and a logarithmic
// one on huge ranges (Young's modulus: 0 to 1e9 Pa), where position 0 is the
// minimum and positions 1..1000 span six decades below the maximum.  Pure.
export const STEPS = 1000;
const LOG_DECADES = 6;

// 'linear' | 'cubic' | 'log'
export function scaleOf(min, max) {
  if (!(max > min)) return 'linear';
  if (min >= 0 && max >= 1e5 && max - min >= 1e5) return 'log';
  return max - min >= 5 ? 'cubic' : 'linear';
}

// The smallest non-minimum value of a log slider (position 1).
const logFloor = (min, max) => Math.max(min, max * 10 ** -LOG_DECADES);

export function toSlider(value, min, max) {
  if (!(max > min) || !Number.isFinite(value)) return 0;
  const v = Math.min(max, Math.max(min, value));
  const s = scaleOf(min, max);
  if (s === 'log') {
    const a = logFloor(min, max);
    if (v < a) return v - min < a - v ? 0 : 1;
    if (!(max > a)) return STEPS;
    return 1 + Math.round((STEPS - 1) * Math.log(v / a) / Math.log(max / a));
  }
  const t = (v - min) / (max - min);
  return Math.round(STEPS * t ** (s === 'cubic' ? 1 / 3 : 1));
}

export function fromSlider(pos, min, max) {
  const p = Math.min(STEPS, Math.max(0, Math.round(pos)));
  const s = scaleOf(min, max);
  let v;
  if (s === 'log') {
    const a = logFloor(min, max);
    v = p === 0 ? min : p === STEPS ? max : a * (max / a) ** ((p - 1) / (STEPS - 1));
  } else {
    const t = p / STEPS;
    v = min + (max - min) * t ** (s === 'cubic' ? 3 : 1);
  }
  return Number(v.toPrecision(4));
}

export function formatValue(v) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a >= 1e6) return v.toExponential(2).replace('e+', 'e');
  if (a >= 1000) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  if (a < 1e-3) return v.toExponential(1);
  return v.toPrecision(2);
}
