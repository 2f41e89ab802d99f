import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * SIGTERM ends the process within SHUTDOWN_TIMEOUT_MS whatever the backends do. Nest's own
 * shutdown (enableShutdownHooks) closes the HTTP server, waits for the requests in flight and runs
 * every shutdown hook: each backend call there is bounded, but a hook could still wait on
 * something that is not. The deadline is armed by the signal itself (a listener of its own, not a
 * Nest hook that might run after the one that hangs); past it the process exits with code 1, and
 * work still running is abandoned: a refill between its allocation and its push is a gap, never a
 * duplicate. The listeners go when the app closes (in-process tests create many apps).
 */
@Injectable()
export class ShutdownDeadline implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Shutdown');
  private readonly arm = (signal: NodeJS.Signals): void => {
    this.disarm();
    const timeoutMs = this.config.shutdownTimeoutMs;
    const timer = setTimeout(() => {
      this.logger.error(`${signal}: not closed within ${timeoutMs} ms (SHUTDOWN_TIMEOUT_MS); exiting, work still running is abandoned`);
      process.exit(1);
    }, timeoutMs);
    timer.unref();
  };

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  onModuleInit(): void {
    for (const signal of SIGNALS) {
      process.once(signal, this.arm);
    }
  }

  onApplicationShutdown(): void {
    this.disarm();
  }

  private disarm(): void {
    for (const signal of SIGNALS) {
      process.removeListener(signal, this.arm);
    }
  }
}
