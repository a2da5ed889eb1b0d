// sliders.js - the mapping between a range input's position (0..1000) and a
// parameter value: a cubic curve for wide ranges, so small values (where most
// defaults sit) get most of the travel.  Pure.
export const STEPS = 1000;
const power = (min, max) => (max - min >= 5 ? 3 : 1);

export function toSlider(value, min, max) {
  if (!(max > min)) return 0;
  const t = Math.min(1, Math.max(0, (value - min) / (max - min)));
  return Math.round(STEPS * t ** (1 / power(min, max)));
}

export function fromSlider(pos, min, max) {
  const t = Math.min(1, Math.max(0, pos / STEPS));
  const v = min + (max - min) * t ** power(min, max);
  return Number(v.toPrecision(4));
}

export function formatValue(v) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a >= 1000) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return v.toPrecision(2);
}
