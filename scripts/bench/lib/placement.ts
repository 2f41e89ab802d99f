import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/**
 * Where the bench's processes run. With two CPUs or more and `taskset` (util-linux) installed, every
 * HTTP server the bench starts (the service and the ceilings alike) is pinned to one CPU and every
 * HTTP load generator to the others, so a run's req/s is what one core of server gives, not how the
 * scheduler happened to share the cores between server and load generator. Redis and MariaDB are
 * not moved: they are the machine's services, not the bench's.
 */
export interface Placement {
  /** CPUs of the HTTP servers; undefined: not pinned. */
  server?: number[];
  /** CPUs of the HTTP load generators; undefined: not pinned. */
  load?: number[];
  /** One line for the log and the table header. */
  text: string;
  /**
   * Processes on the servers' request path that the bench does not own (the local Redis): their
   * CPU time is not counted as "others" on the servers' CPU (lib/compare.ts).
   */
  dependencyPids?: number[];
}

let current: Placement = { text: 'nothing pinned' };

/** The placement decided at start (nothing pinned until `decidePlacement` ran). */
export function placement(): Placement {
  return current;
}

/**
 * Decides once, at start: pinned when `pin` is asked for (the default), `taskset` is there and the
 * process may run on two CPUs or more; the last allowed CPU is the servers', the rest the load's.
 */
export function decidePlacement(pin: boolean): Placement {
  const allowed = allowedCpus();
  if (!pin) {
    current = { text: `nothing pinned (--no-pin; ${allowed.length} CPUs shared by servers, load generator, Redis, MariaDB)` };
  } else if (allowed.length < 2) {
    current = { text: `nothing pinned (${allowed.length} CPU: servers and load generator share it)` };
  } else if (!tasksetInstalled()) {
    current = { text: `nothing pinned (taskset not found: install util-linux to pin; ${allowed.length} CPUs shared)` };
  } else {
    const server = allowed.slice(-1);
    const load = allowed.slice(0, -1);
    current = {
      server,
      load,
      text:
        `HTTP servers pinned to CPU ${server.join(',')}, load generators to CPU ${load.join(',')} (taskset); ` +
        `Redis, MariaDB and the rest not pinned`,
    };
  }
  return current;
}

/** Adds processes of the request path (see Placement.dependencyPids). */
export function addDependencyPids(pids: number[]): void {
  current = { ...current, dependencyPids: [...(current.dependencyPids ?? []), ...pids] };
}

/** `cmd args…` run on `cpuList` through taskset (which execs it: the pid is the command's). */
export function pinnedCommand(cmd: string, args: string[], cpuList: number[] | undefined): [string, string[]] {
  return cpuList === undefined ? [cmd, args] : ['taskset', ['-c', cpuList.join(','), cmd, ...args]];
}

/** CPUs this process may run on (Cpus_allowed_list of /proc/self/status), else 0…os.cpus()-1. */
export function allowedCpus(): number[] {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const line = /^Cpus_allowed_list:\s*(.+)$/m.exec(status);
    if (line !== null) {
      return parseCpuList(line[1]);
    }
  } catch {
    // no /proc: fall through
  }
  return cpus().map((_, i) => i);
}

/** `0-2,5` → [0, 1, 2, 5]. */
export function parseCpuList(list: string): number[] {
  const out: number[] = [];
  for (const part of list.trim().split(',')) {
    const [from, to] = part.split('-').map(Number);
    for (let c = from; c <= (to ?? from); c++) {
      out.push(c);
    }
  }
  return out;
}

function tasksetInstalled(): boolean {
  return spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;
}
