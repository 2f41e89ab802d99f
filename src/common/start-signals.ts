import { Logger } from '@nestjs/common';
import { constants } from 'node:os';
import { ProcessControl, SHUTDOWN_SIGNALS, exitAfter } from './shutdown-deadline';

/** Runs of `uninterrupted` work under way (process-wide, as signals are). */
let uninterruptedRuns = 0;
/** A signal that arrived during such work, while a StartSignals guard was installed. */
let heldSignal: NodeJS.Signals | null = null;

/** The start was given up because a signal arrived while work that must not be cut ran. */
export class StartAbandoned extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`${signal} during the start: the migrations under way were let finish; the service does not start`);
    this.name = 'StartAbandoned';
  }
}

/**
 * Runs `work` so that a SIGTERM/SIGINT during it does not end the process in the middle (the
 * migrations at start: MariaDB's DDL is not transactional, and a migration cut between two of its
 * statements leaves a schema that is neither the old one nor the new). With a StartSignals guard
 * installed (startService) the signal is held while `work` runs, and this throws StartAbandoned
 * once it finished; the guard's deadline (SHUTDOWN_TIMEOUT_MS) still ends the process if it takes
 * longer. Without a guard (in-process tests, `npm run migration:run`) it only runs `work`.
 */
export async function uninterrupted<T>(work: () => Promise<T>): Promise<T> {
  let result: T;
  uninterruptedRuns++;
  try {
    result = await work();
  } finally {
    uninterruptedRuns--;
  }
  if (heldSignal !== null) {
    throw new StartAbandoned(heldSignal);
  }
  return result;
}

/**
 * SIGTERM/SIGINT during the start, before the app's own shutdown hooks listen (createApp): the
 * process exits at once as without a listener (code 128 + the signal's number), unless
 * `uninterrupted` work runs: then the signal is held (that work finishes, the start is abandoned)
 * and the shutdown deadline is armed.
 */
export class StartSignals {
  private readonly logger = new Logger('Shutdown');
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    this.remove();
    if (uninterruptedRuns === 0) {
      this.proc.exit(128 + (constants.signals[signal] ?? 0));
      return;
    }
    heldSignal = signal;
    this.logger.warn(`${signal} during the migrations: they finish first (within SHUTDOWN_TIMEOUT_MS), then the service exits without starting`);
    exitAfter(this.timeoutMs, signal, this.proc);
  };

  private constructor(
    private readonly timeoutMs: number,
    private readonly proc: ProcessControl,
  ) {}

  static install(timeoutMs: number, proc: ProcessControl = process): StartSignals {
    heldSignal = null;
    const guard = new StartSignals(timeoutMs, proc);
    for (const signal of SHUTDOWN_SIGNALS) {
      proc.once(signal, guard.onSignal);
    }
    return guard;
  }

  /** The signal held during `uninterrupted` work, if any. */
  get held(): NodeJS.Signals | null {
    return heldSignal;
  }

  remove(): void {
    for (const signal of SHUTDOWN_SIGNALS) {
      this.proc.removeListener(signal, this.onSignal);
    }
  }
}
