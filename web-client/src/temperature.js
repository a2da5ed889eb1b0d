// temperature.js - the frames' temperature bytes (PROTOCOL.md "frame":
// T = temp_range[0] + byte °C) and the colour ramp of the Temperature view:
// cold blue through white near 30 °C, orange, red, to a yellow-white glow.
// The renderer builds its lookup texture from tempLut(), the legend from
// RAMP, so the page, the legend and the tests use one mapping.  Pure.

export const TEMP_RANGE = [-40, 215];     // the protocol's range, used when a frame carries none

// Ramp stops: [°C, [r, g, b] in 0..1 (sRGB)], increasing; clamped at the ends.
export const RAMP = [
  [-40, [0.20, 0.08, 0.42]],   // deep violet: frozen hard
  [-10, [0.10, 0.22, 0.78]],   // dark blue
  [0, [0.13, 0.42, 0.98]],     // blue: freezing point
  [15, [0.50, 0.74, 1.00]],    // pale blue
  [30, [0.95, 0.95, 0.95]],    // white: room temperature and a little above
  [60, [1.00, 0.62, 0.18]],    // orange
  [100, [0.88, 0.14, 0.08]],   // red: boiling water
  [160, [1.00, 0.78, 0.16]],   // yellow
  [215, [1.00, 0.98, 0.86]],   // yellow-white: as hot as the wire carries
];

// °C of a temperature byte.
export const tempOfByte = (byte, lo = TEMP_RANGE[0]) => lo + byte;

// The ramp colour of T °C: [r, g, b], 0..1.
export function tempColour(t) {
  if (!(t > RAMP[0][0])) return RAMP[0][1].slice();             // also NaN
  for (let i = 1; i < RAMP.length; i++) {
    const [t1, c1] = RAMP[i];
    if (t === t1) return c1.slice();
    if (t < t1) {
      const [t0, c0] = RAMP[i - 1];
      const k = (t - t0) / (t1 - t0);
      return [c0[0] + (c1[0] - c0[0]) * k, c0[1] + (c1[1] - c0[1]) * k, c0[2] + (c1[2] - c0[2]) * k];
    }
  }
  return RAMP[RAMP.length - 1][1].slice();
}

// 256 RGBA8 texels: the colour of every byte value for a frame whose range
// starts at lo (out: an optional Uint8Array(1024) to fill).
export function tempLut(lo = TEMP_RANGE[0], out = new Uint8Array(1024)) {
  for (let b = 0; b < 256; b++) {
    const c = tempColour(tempOfByte(b, lo));
    out[4 * b] = Math.round(255 * c[0]);
    out[4 * b + 1] = Math.round(255 * c[1]);
    out[4 * b + 2] = Math.round(255 * c[2]);
    out[4 * b + 3] = 255;
  }
  return out;
}

// Lowest and highest byte of the first n temperature bytes: {min, max}, or
// null when there are none.
export function byteRange(temp, n = temp ? temp.length : 0) {
  if (!temp || !n) return null;
  let lo = 255, hi = 0;
  for (let i = 0; i < n; i++) { const v = temp[i]; if (v < lo) lo = v; if (v > hi) hi = v; }
  return { min: lo, max: hi };
}

// Whether a frame's particles span a temperature range worth colouring by
// (some particle differs from another by more than `spread` °C; one byte is
// one degree).
export function spansTemperatures(temp, n, spread = 2) {
  const r = byteRange(temp, n);
  return !!r && r.max - r.min > spread;
}

// The legend's CSS gradient (left cold, right hot) over [lo, hi] °C.
export function legendGradient(lo = TEMP_RANGE[0], hi = TEMP_RANGE[1]) {
  const hex = (c) => `rgb(${c.map((x) => Math.round(255 * x)).join(',')})`;
  const stops = RAMP.filter(([t]) => t > lo && t < hi).map(([t, c]) => `${hex(c)} ${((t - lo) / (hi - lo) * 100).toFixed(1)}%`);
  return `linear-gradient(to right, ${hex(tempColour(lo))} 0%, ${stops.join(', ')}${stops.length ? ', ' : ''}${hex(tempColour(hi))} 100%)`;
}
