import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { SHUTDOWN_TIMEOUT_MS } from '../config/config-tokens';

export const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/** What of `process` the deadlines use (tests pass their own). */
export interface ProcessControl {
  once(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  removeListener(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  exit(code: number): never | void;
}

/**
 * Exits the process with code 1 once `timeoutMs` passed since `signal`, whatever still runs: work
 * abandoned then is a gap (a refill between its allocation and its push), never a duplicate. The
 * timer does not keep the process alive.
 */
export function exitAfter(timeoutMs: number, signal: NodeJS.Signals, proc: ProcessControl = process): void {
  const timer = setTimeout(() => {
    new Logger('Shutdown').error(`${signal}: not closed within ${timeoutMs} ms (SHUTDOWN_TIMEOUT_MS); exiting, work still running is abandoned`);
    proc.exit(1);
  }, timeoutMs);
  timer.unref();
}

/**
 * SIGTERM ends the process within SHUTDOWN_TIMEOUT_MS whatever the backends do. Nest's own
 * shutdown (enableShutdownHooks) closes the HTTP server, waits for the requests in flight and runs
 * every shutdown hook: each backend call there is bounded, but a hook could still wait on
 * something that is not. `armOnSignals` is called by createApp right after enableShutdownHooks:
 * from then on the signal itself arms the deadline (a listener of its own, not a Nest hook that
 * might run after the one that hangs). Before that, a signal ends the start at once (Node's own
 * behaviour), except during the migrations (start-signals.ts). The listeners go when the app
 * closes (in-process tests create many apps).
 */
@Injectable()
export class ShutdownDeadline implements OnApplicationShutdown {
  private readonly arm = (signal: NodeJS.Signals): void => {
    this.disarm();
    exitAfter(this.timeoutMs, signal);
  };

  constructor(@Inject(SHUTDOWN_TIMEOUT_MS) private readonly timeoutMs: number) {}

  armOnSignals(): void {
    for (const signal of SHUTDOWN_SIGNALS) {
      process.once(signal, this.arm);
    }
  }

  onApplicationShutdown(): void {
    this.disarm();
  }

  private disarm(): void {
    for (const signal of SHUTDOWN_SIGNALS) {
      process.removeListener(signal, this.arm);
    }
  }
}
