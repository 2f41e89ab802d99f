import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { RepeatLimiter } from '../logging/repeat-limiter';

/**
 * The log lines of failed requests: one per request would be thousands of identical lines a
 * second while a backend is down (or a bug fails every request), so each text is written once per
 * REPEAT_WINDOW_MS (logging/repeat-limiter.ts): the first occurrence with its `reqId`, later lines
 * with `repeated: N, sinceMs: M` (the occurrences not written since the line before); what is still
 * counted when the failures stop is written within two windows, or at shutdown. One limiter per
 * level for the whole process, shared by every route (and by the apps an in-process test creates).
 */
const logger = new Logger('ErrorFilter');

const backendFailures = new RepeatLimiter((msg, fields) => logger.warn({ msg, ...fields }));

// Kept apart from the backend failures: varied internal errors cannot push them out of the key cap.
const internalErrors = new RepeatLimiter((msg, fields) => logger.error({ msg, ...fields }));

/** A request failed by a backend (answered 503): `backend failure: <message>`, warn. */
export function logBackendFailure(err: unknown, reqId?: string): void {
  backendFailures.report(`backend failure: ${err instanceof Error ? err.message : String(err)}`, reqId === undefined ? {} : { reqId });
}

/** A request failed by an unexpected error (answered 500): its stack (the key, so the first line of each has it), error. */
export function logInternalError(err: unknown, reqId?: string): void {
  internalErrors.report(err instanceof Error ? (err.stack ?? err.message) : String(err), reqId === undefined ? {} : { reqId });
}

/** At shutdown: the counts not yet written are written, and the limiters' timers stop. */
@Injectable()
export class ErrorLogShutdown implements OnApplicationShutdown {
  onApplicationShutdown(): void {
    backendFailures.close();
    internalErrors.close();
  }
}
