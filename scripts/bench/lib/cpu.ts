import { readFileSync, readdirSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system, µs) a process has used so far, from /proc/<pid>/stat (10 ms ticks; the
 * whole process, threads that ended included); undefined where /proc is missing. Unlike req/s it
 * does not depend on what else runs on the machine.
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

/**
 * A reader of a process's CPU time (µs) for differences over a load run: the sum over its live
 * threads of the scheduler's exact run time (`/proc/<pid>/task/<tid>/schedstat`, ns) when the
 * kernel has it, else `cpuMicros` (chosen once, so two reads never mix the sources). A 2 s run is
 * ~70 ticks of server CPU: ticks alone put ±1.5 % of noise on the CPU per request. A thread that
 * ends between two reads takes its time with it; a server's threads (main, libuv pool, V8
 * platform) live as long as the process.
 */
export function cpuReader(pid: number | undefined): () => number | undefined {
  if (pid !== undefined && threadsMicros(pid) !== undefined) {
    return () => threadsMicros(pid);
  }
  return () => cpuMicros(pid);
}

function threadsMicros(pid: number): number | undefined {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    }
    return Number.isFinite(ns) && ns > 0 ? ns / 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** Per CPU (index = CPU number): [busy, total] jiffies since boot, from /proc/stat; [] without /proc. */
export function cpuJiffies(): Array<[number, number]> {
  try {
    const out: Array<[number, number]> = [];
    for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
      const m = /^cpu(\d+)\s+(.*)$/.exec(line);
      if (m !== null) {
        const f = m[2].trim().split(/\s+/).map(Number);
        // user nice system idle iowait irq softirq steal (guest, guest_nice are inside user, nice)
        const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
        out[Number(m[1])] = [total - f[3] - f[4], total];
      }
    }
    return out;
  } catch {
    return [];
  }
}

/** What to watch for "others on the servers' CPU": the server, its CPUs, the request path's own processes. */
export interface OthersWatch {
  serverPid: number;
  cpus: number[];
  dependencyPids: number[];
}

/**
 * Starts watching; the returned function gives the share of `cpus`' time since then that processes
 * other than the server and its dependencies took (busy jiffies of those CPUs from /proc/stat minus
 * the server's and the dependencies' CPU time, all of the latter taken off wherever it ran), or
 * undefined without /proc.
 */
export function watchOthers(w: OthersWatch): () => number | undefined {
  const server = cpuReader(w.serverPid);
  const own = (): number | undefined => {
    const s = server();
    return s === undefined ? undefined : w.dependencyPids.reduce((sum, pid) => sum + (cpuMicros(pid) ?? 0), s);
  };
  const own0 = own();
  const j0 = cpuJiffies();
  return () => {
    const own1 = own();
    const j1 = cpuJiffies();
    if (own0 === undefined || own1 === undefined || !w.cpus.every((c) => j0[c] !== undefined && j1[c] !== undefined)) {
      return undefined;
    }
    let busy = 0;
    let total = 0;
    for (const c of w.cpus) {
      busy += j1[c][0] - j0[c][0];
      total += j1[c][1] - j0[c][1];
    }
    // Jiffies are 1/100 s: the µs of CPU time in the same unit.
    return total > 0 ? Math.max(0, busy - (own1 - own0) / 10_000) / total : undefined;
  };
}
