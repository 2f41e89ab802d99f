import { pollUntil } from '../../support/poll';
import { IdLedger } from './id-ledger';
import { LoadReport, formatErrors, runLoad } from './load-driver';
import { ServiceProcess } from './service-process';

/** CHAOS_SCALE multiplies the IDs each scenario checks (default 1: at least 2 million in all). */
export const CHAOS_SCALE = Number(process.env.CHAOS_SCALE ?? '1') > 0 ? Number(process.env.CHAOS_SCALE ?? '1') : 1;

export interface ScenarioOptions {
  name: string;
  services: ServiceProcess[];
  path: (n: number) => string;
  /** IDs to collect in all; the fault starts at a fifth of them, the rest comes after it. */
  targetIds: number;
  concurrency?: number;
  /** The fault: runs while the load goes on; the load after it must succeed. */
  fault: (ledger: IdLedger) => Promise<void>;
  /** A request every instance must answer with 200 once the fault is over. */
  probe: (n: number) => string;
}

export interface ScenarioResult {
  name: string;
  ledger: IdLedger;
  during: LoadReport;
  after: LoadReport;
  /** Instances that did not serve the probe after the fault (should be none). */
  unrecovered: string[];
}

/** Prints the summary; asserts no duplicate, no violation, every instance recovered, at least `target` IDs. */
export function expectClean(r: ScenarioResult, target: number): void {
  console.log(summary(r));
  expect(r.ledger.duplicates.slice(0, 5)).toEqual([]);
  expect([...r.during.violations, ...r.after.violations].slice(0, 5)).toEqual([]);
  expect(r.unrecovered).toEqual([]);
  expect(r.ledger.size).toBeGreaterThanOrEqual(target);
}

/** One scenario line of the suite's summary. */
export function summary(r: ScenarioResult): string {
  const violations = r.during.violations.length + r.after.violations.length;
  return (
    `[chaos] ${r.name}: ${r.ledger.checked} IDs checked, ${r.ledger.duplicates.length} duplicates, ` +
    `errors during fault: ${formatErrors(r.during)}, after: ${formatErrors(r.after)}, ` +
    `cut connections: ${r.during.cut + r.after.cut}, violations: ${violations}, ` +
    `unrecovered: ${r.unrecovered.length === 0 ? 'none' : r.unrecovered.join(',')}`
  );
}

/**
 * Load until a fifth of the target, the fault alongside the load, then the rest of the target
 * after the fault is over (the service recovered by itself), then a probe of every instance.
 */
export async function runScenario(o: ScenarioOptions): Promise<ScenarioResult> {
  const ledger = new IdLedger();
  const concurrency = o.concurrency ?? 12;
  let fault: Promise<void> | null = null;
  const faultErrors: Error[] = [];
  let faultOver = false;
  const faultAt = Math.floor(o.targetIds / 5);
  const during = await runLoad({
    services: o.services,
    path: o.path,
    concurrency,
    targetIds: Math.floor(o.targetIds / 2),
    maxMs: 120_000,
    ledger,
    onProgress: () => {
      if (fault === null && ledger.size >= faultAt) {
        fault = o
          .fault(ledger)
          .catch((err: unknown) => {
            faultErrors.push(err instanceof Error ? err : new Error(String(err)));
          })
          .finally(() => {
            faultOver = true;
          });
      }
    },
    // The load goes on for as long as the fault lasts.
    keepGoing: () => fault !== null && !faultOver,
  });
  // The load is bounded; a fault that did not start yet starts now.
  await (fault ?? o.fault(ledger));
  if (faultErrors.length > 0) {
    throw faultErrors[0];
  }
  const after = await runLoad({ services: o.services, path: o.path, concurrency, targetIds: o.targetIds, maxMs: 120_000, ledger });
  const unrecovered: string[] = [];
  for (const service of o.services) {
    if (!(await serves(service, o.probe, ledger))) {
      unrecovered.push(service.name);
      console.log(`[chaos] ${service.name} did not recover; its last output:\n${service.process.log.slice(-4000)}`);
    }
  }
  return { name: o.name, ledger, during, after, unrecovered };
}

/** Within 30 s, the instance answers the probe with 200 (its IDs go to the ledger). */
async function serves(service: ServiceProcess, probe: (n: number) => string, ledger: IdLedger): Promise<boolean> {
  let n = 0;
  const answer = async (): Promise<boolean> => {
    const res = await fetch(`${service.baseUrl}${probe(n++)}`, { signal: AbortSignal.timeout(10_000) });
    const body = await res.text();
    if (res.status !== 200) {
      return false;
    }
    for (const id of (JSON.parse(body) as { ids: string[] }).ids) {
      ledger.add(id, `${service.name}/probe`);
    }
    return true;
  };
  return pollUntil(`${service.name} to serve`, answer, { timeoutMs: 30_000, intervalMs: 200, tolerateErrors: true }).then(
    () => true,
    () => false,
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
