import { ErrorKind } from './id-gen.error';

export interface ErrorSpec {
  /** Numeric code in the JSON body; Meituan Leaf codes where they exist. */
  code: number;
  status: number;
}

/**
 * Every error kind with its wire code and HTTP status. The switch is exhaustive: adding a kind
 * without a mapping fails the type-check.
 */
export function errorSpec(kind: ErrorKind): ErrorSpec {
  switch (kind) {
    case ErrorKind.QueueNotInitialised:
      return { code: -1, status: 503 };
    case ErrorKind.QueueAppNotFound:
      return { code: -2, status: 404 };
    case ErrorKind.QueueShardNotFound:
      return { code: -3, status: 404 };
    case ErrorKind.QueueEmpty:
      return { code: -4, status: 503 };
    case ErrorKind.QueueExhausted:
      return { code: -5, status: 410 };
    case ErrorKind.QueueNotReplicated:
      return { code: -6, status: 503 };
    case ErrorKind.QueueMarkerInvalid:
      return { code: -7, status: 503 };
    case ErrorKind.SegmentNotInitialised:
      return { code: -1, status: 503 };
    case ErrorKind.SegmentKeyNotFound:
      return { code: -2, status: 404 };
    case ErrorKind.SegmentBothNotReady:
      return { code: -3, status: 503 };
    case ErrorKind.SegmentDisabled:
      return { code: -200, status: 503 };
    case ErrorKind.SnowflakeClockBackwards:
      return { code: -210, status: 503 };
    case ErrorKind.SnowflakeTimeOverflow:
      return { code: -211, status: 503 };
    case ErrorKind.SnowflakeNotReady:
      return { code: -212, status: 503 };
    case ErrorKind.SnowflakeLeaseLost:
      return { code: -213, status: 503 };
    case ErrorKind.SnowflakeDisabled:
      return { code: -214, status: 503 };
    case ErrorKind.SnowflakeStartRefused:
      return { code: -215, status: 503 };
    case ErrorKind.NumberFormatNotFound:
      return { code: -300, status: 404 };
    case ErrorKind.NumberExhausted:
      return { code: -301, status: 410 };
    case ErrorKind.NumberTextOverlap:
      return { code: -302, status: 409 };
    case ErrorKind.BadInput:
      return { code: -100, status: 400 };
    case ErrorKind.Unauthorized:
      return { code: -101, status: 401 };
    case ErrorKind.AdminDisabled:
      return { code: -102, status: 403 };
    case ErrorKind.RouteNotFound:
      return { code: -103, status: 404 };
    case ErrorKind.MethodNotAllowed:
      return { code: -104, status: 405 };
    case ErrorKind.Conflict:
      return { code: -105, status: 409 };
    case ErrorKind.NotFound:
      return { code: -106, status: 404 };
    case ErrorKind.PayloadTooLarge:
      return { code: -107, status: 413 };
    case ErrorKind.UnsupportedMediaType:
      return { code: -108, status: 415 };
    case ErrorKind.BackendUnavailable:
      return { code: -109, status: 503 };
    case ErrorKind.ShuttingDown:
      return { code: -110, status: 503 };
    case ErrorKind.Internal:
      return { code: -500, status: 500 };
    default:
      return assertUnreachable(kind);
  }
}

export function assertUnreachable(value: never): never {
  throw new Error(`unmapped error kind: ${String(value)}`);
}
