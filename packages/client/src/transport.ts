import { Clock } from './clock';
import { ShardleafArgumentError, ShardleafClosedError, ShardleafError, ShardleafErrorBody, ShardleafUnavailableError } from './errors';

/** The part of the WHATWG `Response` the client reads. */
export interface ResponseLike {
  status: number;
  text(): Promise<string>;
}

/** The part of `fetch` the client calls (Node's global fetch by default; tests pass a fake server). */
export type FetchLike = (url: string, init: { method: string; signal: AbortSignal; headers: Record<string, string> }) => Promise<ResponseLike>;

export interface TransportOptions {
  /** Base URLs, e.g. `http://10.0.0.1:8080`. */
  servers: readonly string[];
  /** Every call (connect, reply, body) is abandoned after this long. */
  timeoutMs: number;
  /** A failing server is skipped for base × 2^(failures-1) ms, at most max. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  clock: Clock;
  fetch: FetchLike;
  headers?: Record<string, string>;
}

interface ServerState {
  url: string;
  failures: number;
  /** Skipped until this time (clock ms) after a failure. */
  downUntil: number;
}

/** Per server, for tests and monitoring. */
export interface ServerView {
  url: string;
  failures: number;
  backingOff: boolean;
}

/**
 * Round robin over the servers. A server that fails (network error, timeout, 5xx, a reply that is
 * not JSON) is skipped and retried after an exponential backoff; the call goes on to the next
 * server, so a 503 is retried elsewhere. A 4xx is the caller's problem: thrown at once as a
 * ShardleafError. When every server is backing off, the one due first is tried anyway.
 *
 * A lease (POST) retried after a timeout may have been granted by the first server: that range is
 * lost (a gap), never handed out twice — the next server allocates a new one.
 */
export class Transport {
  private readonly states: ServerState[];
  private next = 0;
  private closed = false;
  private readonly inFlight = new Set<AbortController>();

  constructor(private readonly options: TransportOptions) {
    if (options.servers.length === 0) {
      throw new ShardleafArgumentError('servers', 'give at least one server URL');
    }
    this.states = options.servers.map((url) => ({ url: url.replace(/\/+$/, ''), failures: 0, downUntil: 0 }));
  }

  servers(): ServerView[] {
    const now = this.options.clock.now();
    return this.states.map((s) => ({ url: s.url, failures: s.failures, backingOff: s.downUntil > now }));
  }

  /** Sends `method path` to one server after another until one answers 2xx (parsed JSON) or 4xx (thrown). */
  async request<T>(method: 'GET' | 'POST', path: string): Promise<T> {
    const failures: string[] = [];
    let lastError: unknown;
    for (const server of this.candidates()) {
      if (this.closed) {
        throw new ShardleafClosedError();
      }
      const url = server.url + path;
      let status: number;
      let text: string;
      try {
        ({ status, text } = await this.send(method, url));
      } catch (err) {
        if (this.closed) {
          throw new ShardleafClosedError();
        }
        lastError = err;
        failures.push(`${method} ${url}: ${errorMessage(err)}`);
        this.markFailed(server);
        continue;
      }
      if (status >= 200 && status < 300) {
        try {
          const body = JSON.parse(text) as T;
          this.markOk(server);
          return body;
        } catch (err) {
          lastError = err;
          failures.push(`${method} ${url}: HTTP ${status} with a body that is not JSON`);
          this.markFailed(server);
          continue;
        }
      }
      if (status >= 400 && status < 500) {
        this.markOk(server);
        throw new ShardleafError(status, errorBody(status, text), url);
      }
      lastError = new Error(`HTTP ${status}: ${text.slice(0, 200)}`);
      failures.push(`${method} ${url}: HTTP ${status} ${text.slice(0, 200)}`);
      this.markFailed(server);
    }
    throw new ShardleafUnavailableError(
      `no shardleaf server answered ${method} ${path} (${failures.length} attempt(s)): ${failures.join('; ')}`,
      failures,
      { cause: lastError },
    );
  }

  /** Aborts every call in flight; later calls fail with ShardleafClosedError. */
  close(): void {
    this.closed = true;
    for (const controller of this.inFlight) {
      controller.abort(new ShardleafClosedError());
    }
    this.inFlight.clear();
  }

  /** The servers not backing off, in round-robin order from the next one; or the one due first. */
  private candidates(): ServerState[] {
    const now = this.options.clock.now();
    const n = this.states.length;
    const start = this.next;
    this.next = (this.next + 1) % n;
    const up: ServerState[] = [];
    for (let i = 0; i < n; i++) {
      const s = this.states[(start + i) % n];
      if (s.downUntil <= now) {
        up.push(s);
      }
    }
    if (up.length > 0) {
      return up;
    }
    let due = this.states[0];
    for (const s of this.states) {
      if (s.downUntil < due.downUntil) {
        due = s;
      }
    }
    return [due];
  }

  private async send(method: string, url: string): Promise<{ status: number; text: string }> {
    const controller = new AbortController();
    this.inFlight.add(controller);
    const timeoutMs = this.options.timeoutMs;
    const cancel = this.options.clock.setTimeout(
      () => controller.abort(new Error(`timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    try {
      const response = await abortable(
        this.options.fetch(url, {
          method,
          signal: controller.signal,
          headers: { accept: 'application/json', ...this.options.headers },
        }),
        controller.signal,
      );
      const text = await abortable(response.text(), controller.signal);
      return { status: response.status, text };
    } finally {
      cancel();
      this.inFlight.delete(controller);
    }
  }

  private markFailed(server: ServerState): void {
    server.failures++;
    const backoff = Math.min(this.options.backoffBaseMs * 2 ** Math.min(server.failures - 1, 30), this.options.backoffMaxMs);
    server.downUntil = this.options.clock.now() + backoff;
  }

  private markOk(server: ServerState): void {
    server.failures = 0;
    server.downUntil = 0;
  }
}

/** Rejects as soon as the signal aborts, even if `promise` (a fetch that ignores it) never settles. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  // The original promise may reject after we stopped listening (or before we start): never an
  // unhandled rejection, which would crash the caller's process.
  promise.catch(() => undefined);
  if (signal.aborted) {
    return Promise.reject(toError(signal.reason));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(toError(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(toError(err));
      },
    );
  });
}

function errorBody(status: number, text: string): ShardleafErrorBody {
  try {
    const body = JSON.parse(text) as Partial<ShardleafErrorBody>;
    if (typeof body.code === 'number' && typeof body.error === 'string' && typeof body.message === 'string') {
      return { code: body.code, error: body.error, message: body.message };
    }
  } catch {
    // not JSON: described below
  }
  return { code: 0, error: `HTTP_${status}`, message: text.slice(0, 500) || `HTTP ${status}` };
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

function errorMessage(err: unknown): string {
  const e = toError(err);
  const cause = (e as { cause?: unknown }).cause;
  return cause instanceof Error ? `${e.message} (${cause.message})` : e.message;
}
