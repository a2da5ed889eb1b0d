// solver.js - which solver steps the world, as the page knows it: the list
// and current one from every hello, the `solver` and `scene` broadcasts
// (whoever caused them), this page's own `set_solver` requests, and each
// solver's parameter set (GET /api/solvers, fetched after every hello: the
// hello itself does not carry them).  The selector shows the request in
// flight, else the server's solver; the material panel shows the running
// solver's parameters, or all of them while the sets are unknown.  Pure but
// for the injected fetch.
import { cmd } from './protocol.js';
import { apiPath } from './room.js';

export class SolverState {
  constructor() {
    this.options = [];       // hello.solvers, in the server's order
    this.current = null;     // the solver the server runs
    this.pending = null;     // a name this page asked for, until the reply
    this.by = null;          // client id that caused the last change (0: REST)
    this.tick = null;
    this.lastReply = null;   // {name, ok, error}
    this.sets = null;        // Map solver -> [parameter names], null: unknown
  }

  // A (re)synchronising hello.
  fromHello(h) {
    this.options = Array.isArray(h.solvers) ? h.solvers.map(String) : [];
    this.current = typeof h.solver === 'string' ? h.solver : null;
    if (this.current && !this.options.includes(this.current)) this.options.push(this.current);
    this.pending = null;
    this.by = null;
    this.tick = null;
  }

  // A `solver` or `scene` broadcast (both name the solver): returns whether
  // the solver changed.
  onBroadcast(m) {
    if (!m || typeof m.solver !== 'string') return false;
    const changed = m.solver !== this.current;
    this.current = m.solver;
    if (!this.options.includes(m.solver)) this.options.push(m.solver);
    this.by = m.by ?? null;
    this.tick = m.tick ?? null;
    return changed;
  }

  // The user picked `name` (the same as the current one too: the server
  // switches anyway): the command to send, or null for a name the server does
  // not have.
  request(name) {
    if (!this.options.includes(name)) return null;
    this.pending = name;
    return cmd.setSolver(name);
  }

  // The reply to request(name).
  onReply(name, r) {
    if (this.pending === name) this.pending = null;
    this.lastReply = { name, ok: !!r?.ok, error: r?.ok ? null : (r?.error || 'failed') };
    if (r?.ok) this.current = name;
    return !!r?.ok;
  }

  // What the selector shows.
  get shown() { return this.pending ?? this.current ?? ''; }

  // GET /api/solvers ({solvers: [{name, doc, params}]}) through fetchFn:
  // keeps each solver's parameter set and returns the answer (null when it
  // failed: every parameter shows then).
  async fetchSets(fetchFn = fetch) {
    let j = null;
    try {
      const r = await fetchFn(apiPath('/solvers'), { signal: AbortSignal.timeout(5000) });
      j = r.ok ? await r.json() : null;
    } catch { j = null; }
    this.sets = new Map();
    for (const sv of Array.isArray(j?.solvers) ? j.solvers : [])
      if (typeof sv?.name === 'string' && Array.isArray(sv.params)) this.sets.set(sv.name, sv.params.map(String));
    if (!this.sets.size) this.sets = null;
    return j;
  }

  // The parameters the running solver reads (a Set), or null: show them all
  // (the sets are unknown, or the solver has none listed).
  get paramSet() {
    const p = this.sets?.get(this.current);
    return p ? new Set(p) : null;
  }
}
