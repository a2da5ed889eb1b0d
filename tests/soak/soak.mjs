// soak.mjs - the soak test: the ASan + UBSan + LSan build of
// fluid-server under every kind of load at once, on loopback, for a bounded
// time.  Two modes:
//   test (the default; `make test`, 60 s): only what does not depend on the
//     machine's speed, so that it passes on a machine busy with other work:
//     - the server is alive at the end and exits 0 on SIGTERM (LSan's leak
//       check runs at exit);
//     - no sanitizer report (ASan, UBSan, LSan) on its stderr;
//     - RSS levels off: growth after the warm-up <= the bar (a size: 20 MB
//       for the 5-minute run after its first minute; 8 MB after the first half
//       of a short run, see RSS_BAR_MB);
//     - the well-behaved client stays connected, and every frame it receives
//       decodes (msgpack and the v2 payload, none refused), in order, with the
//       same particles;
//     - every health probe is answered 200 {"ok": true};
//     - every kind of load ran, and REST answered every valid request 2xx
//       and every invalid one 4xx, each answer well-formed, no request lost.
//     The rates and latencies it measured are printed as information; the
//     bars are counted as skipped.
//   bench (--bench; `make soak`, 5 minutes): the same checks, and the bars
//     of bench_bars.mjs on the rates (frames/s, share of frames, health
//     latency, the load's rates), with the load average at the start and end.
// The load, all at once:
//   40 clients that connect, read for 1-10 s and leave, over and over;
//   2 clients that never read (one of them keeps sending commands);
//   1 client sending garbage 20 times a second (random bytes, truncated
//     msgpack, maps with wrong types, duplicate keys, false lengths, deep
//     nesting, oversized and text messages), reconnecting when refused;
//   REST at 20 requests per second (GET stats/particles/scenes/materials/...,
//     POST push/step, PATCH materials, with valid and invalid bodies);
//   50 slowloris connections sending an HTTP header one byte at a time;
//   1 well-behaved client (worker thread) that reads every frame;
//   a health probe (worker thread) every 250 ms.
// Usage: node tests/soak/soak.mjs [--bench] [--duration 300] [--warmup 60] [--particles 1000]
//          [--seed N] [--log DIR] [--binary build/fluid-server-san] [--server-args "--net-nice 0"] [--rss-mb MB]
// Prints each check and closes with "soak: N passed, N failed, N skipped".
import { Worker } from 'node:worker_threads';
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync, readFileSync, readdirSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { loadavg, setPriority, cpus } from 'node:os';
import { startServer, stopAll, get, sleep, ROOT } from '../server/lib.mjs';
import { stopwatch, witnessSleep, threadPct, figures, describe, bars } from './bench_bars.mjs';

// ---------------------------------------------------------------- options
const argv = process.argv.slice(2);
const opt = (name, def) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : def; };
const BENCH = argv.includes('--bench');
const DURATION_S = Number(opt('duration', process.env.SOAK_DURATION || 300));
// Warm-up: the first minute of the 5-minute run; the first half of a short
// one (at least 30 s: the ASan build needs about that long, when it has the
// CPU, to reach its steady state of connections, allocator pools and ASan's
// quarantine, and more on a busy machine).
const WARMUP_S = Number(opt('warmup', DURATION_S >= 120 ? 60 : Math.max(30, Math.round(DURATION_S / 2))));
// 20 MB for the 5-minute run (longer runs: scaled to their length).  A short
// run ends while RSS is still settling: over the second half of 60-second runs
// a healthy server grew 0 to 5.3 MB (measured on the busy 2-core machine), so
// the 5-minute bar's rate (2.5 MB for 30 s) would fail on noise; 8 MB there
// catches runaway growth, and the 5-minute run is the measurement.
const RSS_BAR_MB = Number(opt('rss-mb', DURATION_S >= 120 ? 20 * Math.max(1, DURATION_S / 300) : 8));
const PARTICLES = Number(opt('particles', 1000));
const SEED = Number(opt('seed', process.env.SOAK_SEED || (Date.now() % 1e9)));
const LOG_DIR = resolve(ROOT, opt('log', 'build/soak'));
const BINARY = resolve(ROOT, opt('binary', process.env.FLUID_SERVER_SAN || 'build/fluid-server-san'));
// Extra server options, for experiments (e.g. --server-args "--net-nice 0").
const SERVER_ARGS = (opt('server-args', '') || '').split(' ').filter(Boolean);
const FRAME_HZ = 30;
const LOAD_NICE = 10;
// The deadline of a wait (the first frame, the load's counts, the observers'
// results): it only turns a hang into a failure, and times nothing.
const WAIT_MS = 60000;

// ---------------------------------------------------------------- run
function startWorker(role, port) {
  const w = new Worker(new URL('./worker.mjs', import.meta.url), { workerData: { role, port } });
  const inbox = [], waiters = new Set();
  w.on('message', (m) => { inbox.push(m); for (const f of [...waiters]) f(); });
  // Resolves with the first message (already received or to come) matching pred.
  const next = (pred, timeoutMs) => new Promise((res, rej) => {
    const f = () => {
      const i = inbox.findIndex(pred);
      if (i < 0) return false;
      clearTimeout(t); waiters.delete(f); res(inbox.splice(i, 1)[0]);
      return true;
    };
    const t = setTimeout(() => { waiters.delete(f); rej(new Error(`${role} worker: timed out`)); }, timeoutMs);
    if (!f()) waiters.add(f);
  });
  w.on('error', (e) => { console.error(`${role} worker failed:`, e); });
  return { w, next };
}

const checks = [];
function check(name, ok, detail) {
  checks.push({ name, ok });
  console.log(`${ok ? 'ok  ' : 'FAIL'}  ${name}: ${detail}`);
}
function skip(name, why) {
  checks.push({ name, skipped: true });
  console.log(`skip  ${name}: ${why}`);
}
function summary(extraFailed = 0) {
  const n = (f) => checks.filter(f).length;
  return `soak: ${n((c) => c.ok)} passed, ${n((c) => !c.ok && !c.skipped) + extraFailed} failed, ${n((c) => c.skipped)} skipped`;
}

const mb = (kib) => (kib / 1024).toFixed(1);
// CPU seconds (user + system) a process has used, from /proc/PID/stat.
function cpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in USER_HZ (100)
  } catch { return NaN; }
}
// Per thread of a process: name, time on a CPU and time runnable but waiting
// for one (ns, /proc/PID/task/TID/schedstat).  Waiting time tells a server
// that was slow from one that was starved by other work on the machine.
function threadTimes(pid) {
  const out = {};
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        const name = Number(tid) === pid ? 'net' : readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
        const k = name === 'net' ? 'net' : 'sim'; // the main thread runs libwebsockets; the rest step the world
        out[k] = out[k] || { run: 0, wait: 0 };
        out[k].run += run; out[k].wait += wait;
      } catch { /* thread gone */ }
    }
  } catch { /* process gone */ }
  return out;
}
const loadStr = () => loadavg().map((x) => x.toFixed(2)).join(' ');

async function main() {
  mkdirSync(LOG_DIR, { recursive: true });
  const load0 = loadStr();
  console.log(`soak (${BENCH ? 'bench: the checks and the rate bars' : 'test: no rate or latency is checked; --bench applies the bars'}): ` +
    `${DURATION_S} s (warm-up ${WARMUP_S} s, RSS bar ${RSS_BAR_MB.toFixed(1)} MB), dam_break ${PARTICLES} particles, ` +
    `frame-hz ${FRAME_HZ}, seed ${SEED}, server ${BINARY} ${SERVER_ARGS.join(' ')}`);
  console.log(`machine: ${cpus().length} cores, load average ${load0} at the start`);
  const s = await startServer(['--scene', 'dam_break', '--particles', String(PARTICLES), '--frame-hz', String(FRAME_HZ), '--tick-hz', '60', ...SERVER_ARGS], {
    binary: BINARY, timeoutMs: 60000,
    env: {
      // Leak check at exit; the first error ends the process (exit 23) and
      // is printed on stderr.  A smaller quarantine than the default 256 MB:
      // freed blocks wait there before reuse, and the default would make RSS
      // climb for the whole run, hiding whether the server's own memory
      // levels off; 8 MB still catches a use-after-free of recently freed blocks.
      ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0:exitcode=23:quarantine_size_mb=8',
      UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
    },
  });
  const good = startWorker('good', s.port);
  const hello = await good.next((m) => m.event === 'hello', WAIT_MS);
  await good.next((m) => m.event === 'first-frame', WAIT_MS);
  const stats0 = (await get(s, '/api/stats')).json;
  const health = startWorker('health', s.port);

  // Everything at once: the load generator, a child process at nice 10.
  const load = fork(new URL('./load.mjs', import.meta.url), [String(s.port), String(PARTICLES), String(SEED)], { stdio: 'inherit' });
  try { setPriority(load.pid, LOAD_NICE); } catch (e) { console.log(`  (cannot renice the load generator: ${e.message})`); }
  const loadMsg = (pred, timeoutMs) => new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error('load generator: timed out')), timeoutMs);
    const f = (m) => { if (pred(m)) { clearTimeout(t); load.off('message', f); res(m); } };
    load.on('message', f);
  });
  const rates = (await loadMsg((m) => m.started, WAIT_MS)).started;
  // The run's clock, from the load's start: the run lasts DURATION_S under
  // load, and the RSS samples and the warm-up are placed on it (the server's
  // start and its first frame take seconds more on a busy machine, and they
  // do not count as warm-up).  Nothing is checked against it here.
  const elapsed = stopwatch(), serverCpu0S = cpuSeconds(s.proc.pid);

  // RSS every 2 s (every second in short runs), the server's own view every 10 s.
  const rss = [];
  const samplePeriodMs = DURATION_S >= 120 ? 2000 : 1000;
  const sampleSleep = witnessSleep();
  const realtime = [];
  let nextReport = 0;
  const threads0 = threadTimes(s.proc.pid);
  let threadsPrev = threads0, lap = stopwatch();
  while (elapsed() < DURATION_S && s.proc.exitCode === null && s.proc.signalCode === null) {
    rss.push({ t: elapsed(), kib: s.rssKiB() });
    if (elapsed() >= nextReport) {
      nextReport = elapsed() + 10;
      const th = threadTimes(s.proc.pid), dt = lap(), before = threadsPrev;
      const pct = (key, field) => threadPct(before, th, key, field, dt).toFixed(0);
      threadsPrev = th; lap = stopwatch();
      try {
        const st = (await get(s, '/api/stats')).json;
        realtime.push(st.realtime_ratio);
        console.log(`  ${elapsed().toFixed(0).padStart(4)} s  RSS ${mb(rss.at(-1).kib)} MB  clients ${st.clients}  realtime ${st.realtime_ratio.toFixed(2)}  ` +
          `step ${st.step_ms.toFixed(1)} ms${st.paused ? '  PAUSED' : ''}  frames ${st.frames_published}  dropped ${st.frames_dropped}  ` +
          `cpu/waiting: sim ${pct('sim', 'run')}/${pct('sim', 'wait')}%, net ${pct('net', 'run')}/${pct('net', 'wait')}%  load ${loadavg()[0].toFixed(1)}`);
      } catch (e) { console.log(`  ${elapsed().toFixed(0)} s  stats failed: ${e.message}`); }
    }
    await sampleSleep(samplePeriodMs);
  }

  // Stop the load, then look.
  const serverCpuS = cpuSeconds(s.proc.pid) - serverCpu0S, loadCpuS = cpuSeconds(load.pid), wallS = elapsed();
  const threads1 = threadTimes(s.proc.pid);
  const load1 = loadStr();
  const loadDone = loadMsg((m) => m.counts, 2 * WAIT_MS + 15000);
  load.send('stop');
  const counts = (await loadDone).counts;
  const aliveAtEnd = s.proc.exitCode === null && s.proc.signalCode === null;
  let healthEnd = null, clientsEnd = null, statsEnd = null;
  try {
    healthEnd = await get(s, '/api/health');
    statsEnd = (await get(s, '/api/stats')).json;
    clientsEnd = (await get(s, '/api/clients')).json;
  } catch (e) { healthEnd = { status: 0, text: String(e) }; }
  const goodServer = clientsEnd?.clients.find((c) => c.id === hello.clientId);
  good.w.postMessage('stop');
  health.w.postMessage('stop');
  const goodR = (await good.next((m) => m.event === 'result', WAIT_MS)).result;
  const healthR = (await health.next((m) => m.event === 'result', 2 * WAIT_MS)).result;
  await Promise.all([good.w.terminate(), health.w.terminate()]);
  await sleep(500);
  const rssEndKiB = aliveAtEnd ? s.rssKiB() : NaN;
  const stop = await s.stop('SIGTERM', 60000);
  writeFileSync(join(LOG_DIR, 'server-stderr.log'), s.stderr);
  writeFileSync(join(LOG_DIR, 'rss.csv'), 't_s,rss_kib\n' + rss.map((r) => `${r.t.toFixed(1)},${r.kib}`).join('\n') + '\n');

  // ---- what happened (information)
  console.log(`\nload: ${counts.churnConnects} churn connections (${counts.churnFailed} failed to connect, ${counts.churnRefused} refused 1013, ` +
    `${mb(counts.churnBytes / 1024)} MB read), ${counts.stuckConnects} non-reader connections (${counts.stuckCommands} commands sent unread), ` +
    `${counts.garbageSent} garbage messages on ${counts.garbageConnects} connections (${counts.garbageClosed1008} closed 1008, ${counts.garbageReplies} replies; ` +
    `${Object.entries(counts.garbageKinds).map(([k, v]) => `${k} ${v}`).join(', ')}), ${counts.slowConnects} slowloris connections ` +
    `(${counts.slowClosedByServer} closed by the server, longest ${(counts.slowLifeMsMax / 1000).toFixed(1)} s, ${counts.slowBytes} bytes), ` +
    `${counts.rest} REST requests (${counts.restValid} valid, ${counts.restInvalid} invalid, ${counts.restSkipped} skipped at 32 in flight, ${counts.restRetried} sent again after a keep-alive close)`);
  if (statsEnd) console.log(`server: frames_published ${statsEnd.frames_published}, frames_sent ${statsEnd.frames_sent}, frames_dropped ${statsEnd.frames_dropped}, ` +
    `bad_messages ${statsEnd.bad_messages}, rate_limited ${statsEnd.rate_limited}, clients_refused ${statsEnd.clients_refused}, http_requests ${statsEnd.http_requests}, ` +
    `overruns ${statsEnd.overruns}, realtime ratio min ${Math.min(...realtime).toFixed(2)} mean ${(realtime.reduce((a, b) => a + b, 0) / realtime.length).toFixed(2)}; ` +
    `for the well-behaved client ${goodServer?.frames_sent} frames sent and ${goodServer?.frames_dropped} dropped`);
  const published = statsEnd ? statsEnd.frames_published - stats0.frames_published : 0;
  const ticks = statsEnd ? statsEnd.tick - stats0.tick : 0;
  const fig = figures({ good: goodR, published, health: healthR, counts, rates, wallS, threads0, threads1, ticks, serverCpuS, loadCpuS });
  console.log(`measured (${BENCH ? 'held to the bars below' : 'information only, not checked'}):`);
  for (const line of describe(fig)) console.log(`  ${line}`);
  console.log(`  witnesses: this runner's sampling timer was late by up to ${(sampleSleep.lateMaxS() * 1000).toFixed(0)} ms; ` +
    `the health probe thread's 20 ms timer by up to ${healthR.timerLateMaxMs.toFixed(0)} ms`);
  const waited = Math.max(fig.cpu.simWait, fig.cpu.netWait);
  if (waited > 20) console.log(`note: the server's threads spent up to ${waited.toFixed(0)}% of the run waiting for a CPU (load average ${load1}): ` +
    'the machine, not only the server, sets the frame rate and latencies measured here');
  console.log('');

  // ---- the checks (test mode: nothing that depends on the machine's speed)
  check('server alive at the end', aliveAtEnd && healthEnd?.status === 200,
    aliveAtEnd ? `GET /api/health ${healthEnd?.status}` : `exited early: code ${s.proc.exitCode} signal ${s.proc.signalCode}`);
  check('exits 0 on SIGTERM', stop.code === 0 && stop.signal === null, `exit code ${stop.code}, signal ${stop.signal}`);
  const sanLines = s.stderr.split('\n').filter((l) => /Sanitizer|runtime error:|SUMMARY:/.test(l));
  check('no sanitizer report', sanLines.length === 0,
    sanLines.length ? `${sanLines.length} lines, first: ${sanLines.slice(0, 5).join(' | ')} (full log ${join(LOG_DIR, 'server-stderr.log')})` : '0 reports');

  // Growth: the median RSS of the last 10 s against the median of the 10 s
  // that end the warm-up (medians, so that one sample taken while a large
  // answer was in memory does not count as growth; a leak moves both).
  const median = (xs) => { const a = [...xs].sort((x, y) => x - y); return a.length ? a[Math.floor((a.length - 1) / 2)] : NaN; };
  const lastT = rss.length ? rss.at(-1).t : 0;
  const base = median(rss.filter((r) => r.t >= WARMUP_S - 10 && r.t <= WARMUP_S).map((r) => r.kib));
  const endMed = median(rss.filter((r) => r.t >= lastT - 10).map((r) => r.kib));
  const maxAfter = Math.max(...rss.filter((r) => r.t >= WARMUP_S).map((r) => r.kib));
  const growthMB = (endMed - base) / 1024;
  check(`RSS growth after ${WARMUP_S} s <= ${RSS_BAR_MB.toFixed(1)} MB`, lastT >= WARMUP_S + 10 && growthMB <= RSS_BAR_MB,
    `start ${mb(rss[0]?.kib)} MB, at ${WARMUP_S} s ${mb(base)} MB, at the end ${mb(endMed)} MB (medians of 10 s): ` +
    `${growthMB >= 0 ? '+' : ''}${growthMB.toFixed(1)} MB; highest sample after ${WARMUP_S} s ${mb(maxAfter)} MB, after the load stopped ${mb(rssEndKiB)} MB`);

  check('well-behaved client connected to the end', !goodR.closed && !goodR.error && goodR.hello === 1,
    goodR.closed ? `closed by the server ${JSON.stringify(goodR.closed)}` : goodR.error ? `error ${goodR.error}` :
      `${goodR.hello} hello${goodR.hello === 1 ? '' : 's'}, ${goodR.frames} frames`);
  check('well-behaved client: every frame decoded, in order, same particles', goodR.frames > 0 && goodR.decoded === goodR.frames &&
    goodR.undecodable === 0 && goodR.refused === 0 && goodR.outOfOrder === 0 && goodR.setChanged === 0,
    `${goodR.decoded}/${goodR.frames} frames decoded (${goodR.keyframes} keyframes), ${goodR.refused} payloads refused` +
    (goodR.refusals.length ? ` (${goodR.refusals.join(' | ')})` : '') + `, ${goodR.undecodable} undecodable messages, ` +
    `${goodR.outOfOrder} out of order${goodR.outOfOrderAt.length ? ` (${goodR.outOfOrderAt.join(', ')})` : ''}, ` +
    `${goodR.firstN} particles, ${goodR.setChanged} frames with another set (n ${goodR.nMin}-${goodR.nMax})`);
  check('/api/health answered 200 every time', healthR.probes > 0 && healthR.ok === healthR.probes,
    `${healthR.ok}/${healthR.probes} answered 200 {"ok": true}` + (healthR.failures.length ? `; failures: ${healthR.failures.slice(0, 3).join(' | ')}` : ''));

  const { CHURN_CLIENTS, STUCK_CLIENTS, SLOWLORIS } = rates;
  check('every kind of load ran', counts.churnConnects >= CHURN_CLIENTS && counts.stuckConnects >= STUCK_CLIENTS && counts.garbageSent > 0 &&
    counts.garbageConnects > 0 && counts.restValid > 0 && counts.restInvalid > 0 && counts.slowConnects >= SLOWLORIS,
    `${counts.churnConnects} churn connections (>= ${CHURN_CLIENTS}), ${counts.stuckConnects} non-readers (>= ${STUCK_CLIENTS}), ` +
    `${counts.garbageSent} garbage messages, ${counts.restValid} valid and ${counts.restInvalid} invalid REST requests, ` +
    `${counts.slowConnects} slowloris (>= ${SLOWLORIS})`);
  check('REST: valid requests 2xx, invalid 4xx, answers well-formed, none lost',
    counts.restValid2xx === counts.restValid && counts.restInvalid4xx === counts.restInvalid && counts.restErrors === 0 && counts.restMalformed === 0,
    `${counts.restValid2xx}/${counts.restValid} valid 2xx, ${counts.restInvalid4xx}/${counts.restInvalid} invalid 4xx, ` +
    `${counts.restErrors} transport errors, ${counts.restMalformed} answers not well-formed` +
    (counts.restUnexpected.length ? `; unexpected: ${counts.restUnexpected.slice(0, 5).join(' | ')}` : ''));

  // ---- the bars (bench mode only)
  const barList = bars(fig, { durationS: DURATION_S });
  for (const b of barList) {
    if (BENCH) check(`bench: ${b.name}`, b.ok, b.detail);
    else skip(`bench: ${b.name}`, 'a benchmark bar (--bench, make soak)');
  }
  console.log(`machine: ${cpus().length} cores, load average ${load0} at the start, ${load1} at the end`);
  if (BENCH && barList.some((b) => !b.ok))
    console.log(`bench: ${barList.filter((b) => !b.ok).length} of ${barList.length} bars missed with the load average at ${load0} at the start ` +
      `and ${load1} at the end on ${cpus().length} cores, the server's threads waiting for a CPU up to ${waited.toFixed(0)}% of the run` +
      (waited > 20 || loadavg()[0] > cpus().length ? ': the machine was busy; re-run on a quiet machine before blaming the server' : ''));
  console.log(summary());
  process.exitCode = checks.every((c) => c.ok || c.skipped) ? 0 : 1;
}

main().catch(async (e) => {
  console.error(e);
  await stopAll();
  console.log(`machine: load average ${loadStr()} at the end`);
  console.log(summary(1));
  process.exitCode = 1;
}).finally(() => setTimeout(() => process.exit(), 1000).unref());
