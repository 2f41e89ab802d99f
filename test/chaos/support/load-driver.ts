import { performance } from 'node:perf_hooks';
import { errorSpec } from '../../../src/common/error-catalog';
import { ErrorKind } from '../../../src/common/id-gen.error';
import { IdLedger } from './id-ledger';
import { ServiceProcess } from './service-process';

/** The documented error codes with their HTTP status (the error catalog). */
const DOCUMENTED = new Set<string>(Object.values(ErrorKind).map((kind) => `${errorSpec(kind).status} ${errorSpec(kind).code}`));

/** One 200 reply: what it returned, from which instance, sent and received when (performance.now()). */
export interface LoadReply {
  service: string;
  start: number;
  end: number;
  items: string[];
}

export interface LoadOptions {
  services: ServiceProcess[];
  /** Path and query of request number `n` (a batch route answering {"ids": [...]} or {"numbers": [...]}). */
  path: (n: number) => string;
  concurrency: number;
  /** Stop once the ledger holds this many IDs… */
  targetIds: number;
  /** …or after this long (bounded in time whatever happens). */
  maxMs: number;
  ledger: IdLedger;
  /** Called after every response (fault injection hooks watch the progress here). */
  onProgress?: () => void;
  /** While this says so, the load goes on past `targetIds` (until `maxMs`). */
  keepGoing?: () => boolean;
  /** Any answer (an ID or an error) slower than this is a violation (the bounds on backend calls). */
  maxAnswerMs?: number;
  /** Called with every 200 reply (after its IDs or numbers went to the ledger). */
  onReply?: (reply: LoadReply) => void;
}

export interface LoadReport {
  requests: number;
  ok: number;
  /** Documented errors, by `status code`. */
  errors: Map<string, number>;
  /** Requests in flight to an instance the test killed (the load balancer's problem). */
  cut: number;
  /** Anything else: a 5xx other than 503, an undocumented code, a non-JSON error, a hang, an answer past `maxAnswerMs`. */
  violations: string[];
  elapsedMs: number;
  /** The slowest answer (an ID or an error), ms. */
  slowestMs: number;
}

/** Concurrent batch load over the instances that are up; every returned ID goes to the ledger. */
export async function runLoad(options: LoadOptions): Promise<LoadReport> {
  const report: LoadReport = { requests: 0, ok: 0, errors: new Map(), cut: 0, violations: [], elapsedMs: 0, slowestMs: 0 };
  const started = Date.now();
  let n = 0;
  const done = (): boolean =>
    (options.ledger.size >= options.targetIds && !(options.keepGoing?.() ?? false)) ||
    Date.now() - started >= options.maxMs;
  const worker = async (w: number): Promise<void> => {
    while (!done()) {
      const live = options.services.filter((s) => s.up);
      if (live.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      const service = live[(n + w) % live.length];
      const path = options.path(n++);
      report.requests++;
      await one(service, path, options, report);
      options.onProgress?.();
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, w) => worker(w)));
  report.elapsedMs = Date.now() - started;
  return report;
}

/** A formatted number: printable ASCII, as the patterns allow. */
const NUMBER = /^[A-Za-z0-9_.:/#@+-]{1,64}$/;

async function one(service: ServiceProcess, path: string, options: LoadOptions, report: LoadReport): Promise<void> {
  const { ledger, maxAnswerMs } = options;
  let status: number;
  let body: string;
  let contentType: string;
  const started = Date.now();
  const start = performance.now();
  try {
    const res = await fetch(`${service.baseUrl}${path}`, { signal: AbortSignal.timeout(20_000) });
    status = res.status;
    contentType = res.headers.get('content-type') ?? '';
    body = await res.text();
    const ms = Date.now() - started;
    report.slowestMs = Math.max(report.slowestMs, ms);
    if (maxAnswerMs !== undefined && ms > maxAnswerMs) {
      report.violations.push(`${service.name} ${path}: answered ${status} after ${ms} ms (bound ${maxAnswerMs} ms)`);
    }
  } catch (err) {
    if (!service.up || !service.process.running) {
      report.cut++;
    } else {
      report.violations.push(`${service.name} ${path}: no response (${(err as Error).message})`);
    }
    return;
  }
  if (status === 200) {
    // A batch answers {"ids": [...]} (numbers {"numbers": [...]}), a single get the ID as text.
    const parsed = contentType.includes('json') ? (JSON.parse(body) as { ids?: string[]; numbers?: string[] }) : { ids: [body] };
    const items = parsed.numbers ?? parsed.ids ?? [];
    for (const item of items) {
      if (parsed.numbers ? !NUMBER.test(item) : !/^[1-9][0-9]{0,18}$/.test(item) || BigInt(item) >= 1n << 63n) {
        report.violations.push(`${service.name}: not a ${parsed.numbers ? 'formatted number' : 'positive 64-bit ID'}: ${item}`);
      }
      ledger.add(item, service.name);
    }
    report.ok++;
    options.onReply?.({ service: service.name, start, end: performance.now(), items });
    return;
  }
  const problem = checkError(status, contentType, body);
  if (problem) {
    report.violations.push(`${service.name} ${path}: ${problem}`);
    return;
  }
  const key = `${status} ${(JSON.parse(body) as { code: number }).code}`;
  report.errors.set(key, (report.errors.get(key) ?? 0) + 1);
}

/** Null when this is a documented 4xx/503 JSON error `{code, message}`, else what is wrong. */
export function checkError(status: number, contentType: string, body: string): string | null {
  if (!(status >= 400 && status < 500) && status !== 503) {
    return `HTTP ${status}: ${body.slice(0, 300)}`;
  }
  if (!contentType.includes('application/json')) {
    return `HTTP ${status} not JSON (${contentType}): ${body.slice(0, 300)}`;
  }
  let parsed: { code?: unknown; message?: unknown };
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return `HTTP ${status} invalid JSON: ${body.slice(0, 300)}`;
  }
  if (typeof parsed.code !== 'number' || typeof parsed.message !== 'string') {
    return `HTTP ${status} without {code, message}: ${body.slice(0, 300)}`;
  }
  if (!DOCUMENTED.has(`${status} ${parsed.code}`)) {
    return `HTTP ${status} with undocumented code ${parsed.code}: ${body.slice(0, 300)}`;
  }
  return null;
}

export function formatErrors(report: LoadReport): string {
  const parts = [...report.errors].map(([k, v]) => `${k}×${v}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}
