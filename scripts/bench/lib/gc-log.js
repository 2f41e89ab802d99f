'use strict';
/**
 * A preload for the bench's servers that writes, once a second and at exit, the GC's pauses of the
 * main thread so far (count and milliseconds per kind, from Node's PerformanceObserver; the work of
 * V8's helper threads is not in them) and process.memoryUsage() to
 * `$GC_LOG_DIR/gc-<pid>.log` (default the OS's temporary folder), one JSON line each. Given to
 * every HTTP server of a bench run through BENCH_NODE_FLAGS (the servers run from the checkout's
 * root):
 *
 *   BENCH_NODE_FLAGS="-r ./scripts/bench/lib/gc-log.js" GC_LOG_DIR=/tmp/gc … queue-cpu-split.ts
 *
 * The last line of a server's file, divided by the requests it served (queue-cpu-split.ts prints
 * them by pid), is its GC pause per request, start and top-ups included.
 */
const { appendFileSync, mkdirSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { PerformanceObserver, constants } = require('node:perf_hooks');

const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  // V8's minor mark-sweep (kGCTypeMinorMarkSweep), which Node names no constant for.
  2: 'minor-ms',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
const totals = {};
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = KINDS[entry.detail?.kind] ?? String(entry.detail?.kind);
    const t = (totals[kind] ??= { count: 0, ms: 0 });
    t.count++;
    t.ms += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

const dir = process.env.GC_LOG_DIR || tmpdir();
mkdirSync(dir, { recursive: true });
const file = join(dir, `gc-${process.pid}.log`);
const write = () => appendFileSync(file, `${JSON.stringify({ at: Date.now(), gc: totals, memory: process.memoryUsage() })}\n`);
setInterval(write, 1000).unref();
// The last line complete: the bench stops its servers with SIGTERM, and they exit.
process.on('exit', write);
