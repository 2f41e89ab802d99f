import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system, µs) a process has used so far, from /proc/<pid>/stat; undefined where
 * /proc is missing. Unlike req/s it does not depend on what else runs on the machine.
 */
export function cpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) {
    return undefined;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1e6) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}
