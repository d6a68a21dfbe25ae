// How busy the machine was while the benchmark measured: the CPU time of every
// process outside the benchmark's own process tree (this shared machine's other
// work: test suites, builds), as a share of all cores, between two moments.
// Linux (/proc) only; elsewhere the figures are undefined.
//
// The benchmark's tree: the process named by BENCH_PID (bench.js sets it for its
// children) or this one, and every descendant (probe and matrix children,
// Chromium and its renderers). Foreign CPU = the machine's busy time
// (/proc/stat) minus the tree's (utime + stime + cutime + cstime of each
// member: a child's time moves into its parent's cutime when it exits, so the
// sum stays continuous). Processes that start and end between the two moments
// are counted (they are in /proc/stat).
import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';

const TICK = 100; // USER_HZ on Linux
const ROOT = Number(process.env.BENCH_PID) || process.pid;

function busyTicks() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f;
  return user + nice + system + irq + softirq + (steal || 0);
}

function treeTicks() {
  const kids = new Map(),
    ticks = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let s;
    try {
      s = readFileSync(`/proc/${d}/stat`, 'utf8');
    } catch {
      continue;
    }
    const f = s.slice(s.lastIndexOf(')') + 2).split(' '); // f[0] = state (field 3)
    const pid = +d,
      ppid = +f[1];
    ticks.set(pid, +f[11] + +f[12] + +f[13] + +f[14]); // utime stime cutime cstime (fields 14-17)
    if (!kids.has(ppid)) kids.set(ppid, []);
    kids.get(ppid).push(pid);
  }
  let sum = 0;
  const todo = [ROOT];
  while (todo.length) {
    const p = todo.pop();
    sum += ticks.get(p) ?? 0;
    todo.push(...(kids.get(p) ?? []));
  }
  return sum;
}

function sample() {
  try {
    return { t: performance.now(), busy: busyTicks(), ours: treeTicks(), load: os.loadavg()[0] };
  } catch {
    return { t: performance.now(), load: os.loadavg()[0] };
  }
}

/** Below this many seconds the clock ticks of /proc are too coarse to say. */
const MIN_SECONDS = 5;

/**
 * Starts measuring; stop() returns {foreign, busy, load: [at start, at end], seconds}:
 * foreign = other processes' CPU time / (elapsed x cores), busy = the whole
 * machine's (0..1 each; undefined without /proc or over less than MIN_SECONDS).
 */
export function cpuMeter() {
  const a = sample();
  return {
    stop() {
      const b = sample(),
        cap = ((b.t - a.t) / 1000) * TICK * os.cpus().length;
      const out = { load: [a.load, b.load], seconds: (b.t - a.t) / 1000 };
      if (a.busy !== undefined && b.busy !== undefined && out.seconds >= MIN_SECONDS) {
        const share = (ticks) => Math.min(1, Math.max(0, ticks / cap));
        out.busy = share(b.busy - a.busy);
        out.foreign = share(b.busy - a.busy - (b.ours - a.ours));
      }
      return out;
    },
  };
}

/** Waits until the 1-minute load average is below `below` (polling), at most maxMinutes; resolves to it. */
export async function waitQuiet({ below = 0.5, maxMinutes = 60, log = () => {} } = {}) {
  const t0 = Date.now();
  let said = 0;
  for (;;) {
    const l = os.loadavg()[0];
    if (l < below) return l;
    if (Date.now() - t0 > maxMinutes * 60e3) {
      log(`the machine did not get quiet in ${maxMinutes} min (load ${l.toFixed(2)}): measuring anyway`);
      return l;
    }
    if (Date.now() - said > 60e3) {
      log(`waiting for a quiet machine: 1-min load average ${l.toFixed(2)} (>= ${below})`);
      said = Date.now();
    }
    await new Promise((r) => setTimeout(r, 5000));
  }
}
