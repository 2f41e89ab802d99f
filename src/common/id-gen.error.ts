/**
 * Coded domain errors. Domain code throws `IdGenError(ErrorKind.X, message)`; the one exception
 * filter maps the kind to its numeric wire `code` and HTTP status (see error-catalog.ts).
 * No framework imports here: the cores throw these too.
 */
export enum ErrorKind {
  // Queue IDs (the Java reference service's codes -1..-4, plus ours)
  QueueNotInitialised = 'QUEUE_NOT_INITIALISED',
  QueueAppNotFound = 'QUEUE_APP_NOT_FOUND',
  QueueShardNotFound = 'QUEUE_SHARD_NOT_FOUND',
  QueueEmpty = 'QUEUE_EMPTY',
  QueueExhausted = 'QUEUE_EXHAUSTED',
  /** REDIS_WAIT_REPLICAS: the pop was not confirmed by enough replicas; its IDs were dropped. */
  QueueNotReplicated = 'QUEUE_NOT_REPLICATED',
  /** The shard's push marker is corrupt or not ours: the shard allocates nothing until it is fixed. */
  QueueMarkerInvalid = 'QUEUE_MARKER_INVALID',
  // Leaf segment IDs (Leaf's codes -1..-3, plus "disabled")
  SegmentNotInitialised = 'SEGMENT_NOT_INITIALISED',
  SegmentKeyNotFound = 'SEGMENT_KEY_NOT_FOUND',
  SegmentBothNotReady = 'SEGMENT_BOTH_NOT_READY',
  SegmentDisabled = 'SEGMENT_DISABLED',
  // Leaf snowflake IDs
  SnowflakeClockBackwards = 'SNOWFLAKE_CLOCK_BACKWARDS',
  SnowflakeTimeOverflow = 'SNOWFLAKE_TIME_OVERFLOW',
  SnowflakeNotReady = 'SNOWFLAKE_NOT_READY',
  SnowflakeLeaseLost = 'SNOWFLAKE_LEASE_LOST',
  SnowflakeDisabled = 'SNOWFLAKE_DISABLED',
  SnowflakeStartRefused = 'SNOWFLAKE_START_REFUSED',
  // Formatted numbers
  /** No number format with that key. */
  NumberFormatNotFound = 'NUMBER_FORMAT_NOT_FOUND',
  /** The period's sequence no longer fits in the pattern's digits (never a longer number, never a wrap). */
  NumberExhausted = 'NUMBER_EXHAUSTED',
  /** A new format's pattern can print text a live or deleted format of another key can print. */
  NumberTextOverlap = 'NUMBER_TEXT_OVERLAP',
  // Generic
  BadInput = 'BAD_INPUT',
  Unauthorized = 'UNAUTHORIZED',
  AdminDisabled = 'ADMIN_DISABLED',
  RouteNotFound = 'ROUTE_NOT_FOUND',
  MethodNotAllowed = 'METHOD_NOT_ALLOWED',
  Conflict = 'CONFLICT',
  NotFound = 'NOT_FOUND',
  PayloadTooLarge = 'PAYLOAD_TOO_LARGE',
  UnsupportedMediaType = 'UNSUPPORTED_MEDIA_TYPE',
  BackendUnavailable = 'BACKEND_UNAVAILABLE',
  ShuttingDown = 'SHUTTING_DOWN',
  Internal = 'INTERNAL',
}

export class IdGenError extends Error {
  /**
   * `options.cause`: what failed underneath. On a BACKEND_UNAVAILABLE error it is logged when the
   * error is sent, with the request's id (error.filter.ts), as `backend failure: <its message>`.
   */
  constructor(
    readonly kind: ErrorKind,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'IdGenError';
  }
}

export function badInput(message: string): IdGenError {
  return new IdGenError(ErrorKind.BadInput, message);
}
