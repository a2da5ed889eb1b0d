// auto_colour.js - the page's own choice of colouring: which frame it judges
// (the first frame with particles of each new stream: after a hello, and
// after every scene load or snapshot restore, which start a new epoch) and
// what it chooses from that frame's temperatures.  Keyed on the frame's
// epoch, not on the `scene` message: the server encodes frames on its own
// thread, so the old world's last frame can reach the page after the `scene`
// message, and judging that frame kept a page on temperature colours when a
// uniform scene followed a heated one.  Pure.
import { spansTemperatures } from './temperature.js';

export class AutoColour {
  constructor() { this.epoch = null; this.due = true; }

  // A hello (a new connection): judge its first frame.
  hello() { this.epoch = null; this.due = true; }

  // f: a decoded view ({epoch, n, temp}); colour: the page's current colouring;
  // auto: whether the page (not the user) chose it.  Returns the colouring to
  // switch to ('temperature' or 'material'), or null to keep it.
  frame(f, colour, auto) {
    if (f.epoch !== this.epoch) { this.epoch = f.epoch; this.due = true; }
    if (!this.due || !f.n) return null;
    this.due = false;
    if (!f.temp) return null;
    const spans = spansTemperatures(f.temp, f.n, 2);
    if (spans && colour === 'material') return 'temperature';
    if (!spans && colour === 'temperature' && auto) return 'material';
    return null;
  }
}
