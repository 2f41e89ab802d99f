/** The body of every shardleaf error reply. */
export interface ShardleafErrorBody {
  code: number;
  error: string;
  message: string;
}

/**
 * A 4xx (or 410) answer of a server: the request itself is wrong (bad input, unknown app or tag,
 * an exhausted shard), so no other server is asked. Carries the server's `{code, error, message}`.
 */
export class ShardleafError extends Error implements ShardleafErrorBody {
  readonly code: number;
  readonly error: string;

  constructor(
    readonly status: number,
    body: ShardleafErrorBody,
    readonly url: string,
  ) {
    super(body.message);
    this.name = 'ShardleafError';
    this.code = body.code;
    this.error = body.error;
  }
}

/**
 * No server could answer: each one tried failed (network error, timeout, 5xx) or is backing off.
 * `cause` is the last failure; `failures` lists one line per attempt.
 */
export class ShardleafUnavailableError extends Error {
  constructor(
    message: string,
    readonly failures: string[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ShardleafUnavailableError';
  }
}

/** The client was closed: pending and later calls fail with this. */
export class ShardleafClosedError extends Error {
  constructor() {
    super('the shardleaf client is closed');
    this.name = 'ShardleafClosedError';
  }
}

/**
 * A bad argument or option, caught before anything is sent: an `appId` outside 0..255, an empty
 * `gatePass`, tag or key, a count that is not a positive integer, an option out of range. The
 * message names the argument; `argument` holds its name. A RangeError, so code that caught
 * RangeError before keeps working.
 */
export class ShardleafArgumentError extends RangeError {
  constructor(
    readonly argument: string,
    message: string,
  ) {
    super(message);
    this.name = 'ShardleafArgumentError';
  }
}
