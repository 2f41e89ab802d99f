import { setImmediate as nextTurn } from 'node:timers/promises';

/** One side's loop: runs until `until` (performance.now() ms), returns what it did. */
export type SliceLoop = (until: number) => Promise<{ ids: number; requests: number }>;

/** What one side did over its slices: IDs, requests, and the wall and process CPU time charged to it. */
export interface SideTotals {
  ids: number;
  requests: number;
  ms: number;
  cpuNs: number;
}

/** This process's CPU time so far (user + system, ns). */
export function processCpuNs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
}

/**
 * Two loops measured in many short slices alternated in one process: `ceiling` and `subject` each
 * run `slices` slices of `sliceMs`, in pairs, the first of each pair alternating (ceiling first in
 * even pairs, subject first in odd ones), so a change of the machine's load lands on both sides
 * about equally instead of on one block. Each side's totals are its slices' sums: IDs over wall
 * time is its rate.
 *
 * After every slice the process yields one event-loop turn (setImmediate), so I/O that completed
 * (a lease the subject fetches in the background) is handled there rather than when a loop that
 * never yields runs out of IDs. Every such gap — after the ceiling's slices too — is charged to the
 * subject, wall and CPU: whatever the subject does in the background is counted as its own, and the
 * ceiling pays for nothing but its loop.
 */
export async function interleave(ceiling: SliceLoop, subject: SliceLoop, slices: number, sliceMs: number): Promise<{ ceiling: SideTotals; subject: SideTotals }> {
  const c: SideTotals = { ids: 0, requests: 0, ms: 0, cpuNs: 0 };
  const s: SideTotals = { ids: 0, requests: 0, ms: 0, cpuNs: 0 };
  const slice = async (loop: SliceLoop, side: SideTotals): Promise<void> => {
    const cpu0 = processCpuNs();
    const t0 = performance.now();
    const done = await loop(t0 + sliceMs);
    const t1 = performance.now();
    const cpu1 = processCpuNs();
    side.ids += done.ids;
    side.requests += done.requests;
    side.ms += t1 - t0;
    side.cpuNs += cpu1 - cpu0;
    await nextTurn();
    s.ms += performance.now() - t1;
    s.cpuNs += processCpuNs() - cpu1;
  };
  for (let pair = 0; pair < slices; pair++) {
    if (pair % 2 === 0) {
      await slice(ceiling, c);
      await slice(subject, s);
    } else {
      await slice(subject, s);
      await slice(ceiling, c);
    }
  }
  return { ceiling: c, subject: s };
}
