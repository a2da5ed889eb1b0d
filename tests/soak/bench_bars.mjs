// bench_bars.mjs - the soak's benchmark side: the clocks the soak runs by, the
// rates and latencies it measured, and the bars they are held to
// in the benchmark mode (`node tests/soak/soak.mjs --bench`, which `make soak`
// runs).  The test mode of soak.mjs (the default, which `make test` runs)
// asserts nothing that depends on the machine's speed: it prints these figures
// as information and counts the bars as skipped.  A bar here measures the
// machine as much as the server: on two cores kept busy by other programs the
// server's threads wait for a CPU and the frame rate falls with them, which is
// why bars() is given the load average at the start and end to print beside a
// failed bar.
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';

// The bars: the well-behaved client gets >= 27 of the 30 frames a
// second and >= 90% of the frames the server published while it was
// connected; every health probe answered within 1 s; the load generator ran
// at >= 80% of each of its rates (when it was starved of CPU the server was
// not really loaded).
export const FRAMES_PER_S_BAR = 27, FRAME_SHARE_BAR = 0.9, HEALTH_BAR_MS = 1000, LOAD_RATE_BAR = 0.8;

// Seconds since the call, as a function: the one clock of the soak (the run's
// pacing, the load generator's rates, the observers' latencies and gaps).
export function stopwatch() {
  const t0 = performance.now();
  return () => (performance.now() - t0) / 1000;
}

// sleep(ms) that keeps how late its timer fired at most (a witness: when the
// runner's own timer is late by about as much as an answer took, the machine
// stalled, not the server).  lateMaxS() reads it.
export function witnessSleep() {
  let lateMaxS = 0;
  const sleep = async (ms) => {
    const t0 = performance.now();
    await delay(ms);
    lateMaxS = Math.max(lateMaxS, (performance.now() - t0 - ms) / 1000);
  };
  sleep.lateMaxS = () => lateMaxS;
  return sleep;
}

// Percent of dtS that a thread group (key 'sim' or 'net' of soak.mjs's
// threadTimes) spent on a CPU (field 'run') or waiting for one ('wait').
export function threadPct(before, after, key, field, dtS) {
  return before[key] && after[key] ? (100 * (after[key][field] - before[key][field]) / 1e9) / dtS : NaN;
}

// The rates and latencies of a run, from what soak.mjs gathered.
//   good:    the well-behaved client's result (worker.mjs); published: frames
//   the server published while it was connected; health: the probe's result;
//   counts, rates: the load generator's counts and nominal rates (load.mjs);
//   wallS: seconds the load ran; threads0/1: threadTimes at its start and end;
//   ticks: steps taken; serverCpuS, loadCpuS: CPU seconds used.
export function figures({ good, published, health, counts, rates, wallS, threads0, threads1, ticks, serverCpuS, loadCpuS }) {
  const spanS = good.spanS;
  const pct = (key, field) => threadPct(threads0, threads1, key, field, wallS);
  return {
    wallS,
    frames: good.frames,
    spanS,
    fps: spanS > 0 ? (good.frames - 1) / spanS : 0,
    maxGapMs: good.maxGapMs,
    maxGapAt: good.maxGapAt,
    published,
    share: published > 0 ? good.frames / published : 0,
    health: { probes: health.probes, ok: health.ok, maxMs: health.maxMs, maxAt: health.maxAt, p99Ms: health.p99Ms, medianMs: health.medianMs,
      timerLateMaxMs: health.timerLateMaxMs, timerLateAt: health.timerLateAt },
    count: { churn: counts.churnConnects, garbage: counts.garbageSent, rest: counts.rest },
    perS: { churn: counts.churnConnects / wallS, garbage: counts.garbageSent / wallS, rest: counts.rest / wallS },
    // churn: each of the clients connects at least once every 10 s (lives of 1-10 s)
    nominal: { churn: rates.CHURN_CLIENTS / 10, garbage: rates.GARBAGE_HZ, rest: rates.REST_HZ },
    cpu: {
      server: serverCpuS / wallS, load: loadCpuS / wallS,
      simRun: pct('sim', 'run'), simWait: pct('sim', 'wait'), netRun: pct('net', 'run'), netWait: pct('net', 'wait'),
    },
    ticksPerS: ticks / wallS,
    msPerStep: ticks > 0 ? threadPct(threads0, threads1, 'sim', 'run', 1) * 10 / ticks : NaN,
  };
}

const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : String(x));

// The figures as lines of text (printed in both modes).
export function describe(f) {
  return [
    `well-behaved client: ${f.frames} frames in ${f.spanS.toFixed(1)} s = ${f1(f.fps)} frames/s, ` +
      `${(f.share * 100).toFixed(1)}% of the ${f.published} published while it was connected, longest gap ${f.maxGapMs.toFixed(0)} ms (ending ${f.maxGapAt})`,
    `/api/health: ${f.health.ok}/${f.health.probes} answered ok, max ${f1(f.health.maxMs)} ms (at ${f.health.maxAt}), ` +
      `p99 ${f1(f.health.p99Ms)} ms, median ${f1(f.health.medianMs)} ms`,
    `load rates: churn ${f1(f.perS.churn)} connections/s (the bar asks ${f1(f.nominal.churn)}), garbage ${f1(f.perS.garbage)}/s of ${f.nominal.garbage}, ` +
      `REST ${f1(f.perS.rest)}/s of ${f.nominal.rest}`,
    `CPU over ${f.wallS.toFixed(0)} s: server ${(100 * f.cpu.server).toFixed(0)}% of a core, load generator ${(100 * f.cpu.load).toFixed(0)}%; ` +
      `the sim thread ran ${f.cpu.simRun.toFixed(0)}% of the time and waited for a CPU ${f.cpu.simWait.toFixed(0)}%, ` +
      `the network thread ran ${f.cpu.netRun.toFixed(0)}% and waited ${f.cpu.netWait.toFixed(0)}%`,
    `sim: ${f1(f.ticksPerS)} steps/s of 60, ${Number.isFinite(f.msPerStep) ? f.msPerStep.toFixed(2) : '?'} ms of CPU per step and frame on the sim thread (a tick is 16.7 ms)`,
  ];
}

// The bars: [{ name, ok, detail }], one per bar.
export function bars(f, { durationS }) {
  const churnWant = f.nominal.churn * durationS, garbageWant = LOAD_RATE_BAR * f.nominal.garbage * durationS;
  const restWant = LOAD_RATE_BAR * f.nominal.rest * durationS;
  const { churn, garbage, rest } = f.count;
  return [
    { name: `well-behaved client >= ${FRAMES_PER_S_BAR} frames/s`, ok: f.fps >= FRAMES_PER_S_BAR,
      detail: `${f.frames} frames in ${f.spanS.toFixed(1)} s = ${f1(f.fps)}/s, longest gap ${f.maxGapMs.toFixed(0)} ms` },
    { name: `well-behaved client >= ${FRAME_SHARE_BAR * 100}% of the frames published`, ok: f.share >= FRAME_SHARE_BAR,
      detail: `received ${f.frames} of ${f.published} (${(f.share * 100).toFixed(1)}%)` },
    { name: `/api/health within ${HEALTH_BAR_MS} ms every time`, ok: f.health.probes > 0 && f.health.ok === f.health.probes && f.health.maxMs <= HEALTH_BAR_MS,
      detail: `max ${f1(f.health.maxMs)} ms, p99 ${f1(f.health.p99Ms)} ms over ${f.health.probes} probes; ` +
        `the probe thread's own 20 ms timer was late by up to ${f.health.timerLateMaxMs.toFixed(0)} ms (at ${f.health.timerLateAt})` },
    { name: `the load ran at ${LOAD_RATE_BAR * 100}% of its rates`, ok: churn >= churnWant && garbage >= garbageWant && rest >= restWant,
      detail: `${churn} churn connections (>= ${churnWant.toFixed(0)}), ${garbage} garbage (>= ${garbageWant.toFixed(0)}), ${rest} REST (>= ${restWant.toFixed(0)})` },
  ];
}
