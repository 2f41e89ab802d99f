import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Registry } from 'prom-client';
import { appHooksOf } from '../common/app-hooks';
import { errorKindOf } from '../common/error.filter';
import { routeLabels } from './route-label';

/** ID routes and the generator each serves (the route pattern, as Fastify knows it). */
const ID_ROUTES: Record<string, string> = {
  '/api/id/:appId': 'queue',
  '/api/segment/get/:key': 'segment',
  '/api/snowflake/get/:key': 'snowflake',
};

/** The three counters (prom-client; values read from the in-process counts on every get/scrape). */
export interface HttpCounters {
  requests: Counter<'method' | 'route' | 'status'>;
  errors: Counter<'route' | 'status' | 'error'>;
  idsIssued: Counter<'generator'>;
}

/** One label set of a counter and its count so far. */
interface Cell {
  labels: Record<string, string | number>;
  value: number;
}

/**
 * Counts by label values, in plain numbers: finding the cell is a few Map lookups, where
 * prom-client's `inc(labels)` hashes and validates the label object on every call (~1 µs of the
 * ~25 µs a queue-ID request costs). The counter reads the cells on scrape (`collect`). The cell of
 * the last labels is kept: under load most replies repeat the one before (same route, 200), and
 * three compares find it where three Map lookups did.
 */
class Cells<K1 extends string | number, K2 extends string | number, K3 extends string | number> {
  private readonly byKey = new Map<K1, Map<K2, Map<K3, Cell>>>();
  readonly all: Cell[] = [];
  private last: { k1: K1; k2: K2; k3: K3; cell: Cell } | undefined;

  constructor(private readonly names: readonly [string, string, string]) {}

  add(k1: K1, k2: K2, k3: K3, n: number): void {
    const last = this.last;
    if (last !== undefined && last.k1 === k1 && last.k2 === k2 && last.k3 === k3) {
      last.cell.value += n;
      return;
    }
    const cell = this.find(k1, k2, k3);
    cell.value += n;
    this.last = { k1, k2, k3, cell };
  }

  private find(k1: K1, k2: K2, k3: K3): Cell {
    let level1 = this.byKey.get(k1);
    if (level1 === undefined) {
      level1 = new Map();
      this.byKey.set(k1, level1);
    }
    let level2 = level1.get(k2);
    if (level2 === undefined) {
      level2 = new Map();
      level1.set(k2, level2);
    }
    let cell = level2.get(k3);
    if (cell === undefined) {
      const [n1, n2, n3] = this.names;
      cell = { labels: { [n1]: k1, [n2]: k2, [n3]: k3 }, value: 0 };
      level2.set(k3, cell);
      this.all.push(cell);
    }
    return cell;
  }
}

/** A counter that reports the cells' counts on every scrape. */
function countedIn<L extends string>(
  register: Registry,
  config: { name: string; help: string; labelNames: readonly L[] },
  cells: () => readonly Cell[],
): Counter<L> {
  return new Counter<L>({
    ...config,
    registers: [register],
    collect() {
      this.reset();
      for (const cell of cells()) {
        this.inc(cell.labels as Partial<Record<L, string | number>>, cell.value);
      }
    },
  });
}

/**
 * One note of the app's onSend work (common/app-hooks.ts): counts every reply by route pattern and status, errors by the kind sendError
 * recorded where it mapped the error (UNKNOWN for an error status it did not send, e.g. the health
 * check's 503), and IDs issued by generator. No logging, no look into the body; per request a few
 * Map lookups and additions, the prom-client counters are filled from the counts when scraped.
 */
export function installHttpMetrics(fastify: FastifyInstance, register: Registry): HttpCounters {
  const requests = new Cells<string, string, number>(['method', 'route', 'status']);
  const errors = new Cells<string, number, string>(['route', 'status', 'error']);
  // One label only: the generator's cell, found by route pattern.
  const ids = new Map<string, Cell>();
  const idCells: Cell[] = [];
  for (const [route, generator] of Object.entries(ID_ROUTES)) {
    const cell = { labels: { generator }, value: 0 };
    ids.set(route, cell);
    idCells.push(cell);
  }
  const requestsCounter = countedIn(
    register,
    { name: 'shardleaf_http_requests_total', help: 'HTTP replies by method, route pattern and status', labelNames: ['method', 'route', 'status'] },
    () => requests.all,
  );
  const errorsCounter = countedIn(
    register,
    {
      name: 'shardleaf_http_errors_total',
      help: 'Error replies by route pattern, status and error kind (e.g. QUEUE_EMPTY, SNOWFLAKE_CLOCK_BACKWARDS)',
      labelNames: ['route', 'status', 'error'],
    },
    () => errors.all,
  );
  // A generator that has issued nothing yet has no series (as when prom-client counted).
  const idsCounter = countedIn(
    register,
    { name: 'shardleaf_ids_issued_total', help: 'IDs handed out, by generator (queue, segment, snowflake)', labelNames: ['generator'] },
    () => idCells.filter((c) => c.value > 0),
  );

  const routeOf = routeLabels();
  // The generator cell of the last route that answered 200 (undefined: not an ID route).
  let idRoute: string | undefined;
  let idCell: Cell | undefined;
  appHooksOf(fastify).addNote((request: FastifyRequest, reply: FastifyReply) => {
    const route = routeOf(request);
    const status = reply.statusCode;
    requests.add(request.method, route, status, 1);
    if (status >= 400) {
      errors.add(route, status, errorKindOf(reply) ?? 'UNKNOWN', 1);
    } else if (status === 200) {
      if (route !== idRoute) {
        idRoute = route;
        idCell = ids.get(route);
      }
      const cell = idCell;
      if (cell !== undefined) {
        const count = (request.query as { count?: unknown }).count;
        cell.value += typeof count === 'string' ? Number(count) : 1;
      }
    }
  });
  return { requests: requestsCounter, errors: errorsCounter, idsIssued: idsCounter };
}
