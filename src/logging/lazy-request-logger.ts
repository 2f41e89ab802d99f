import pino, { Logger as PinoLogger } from 'pino';

/**
 * Fastify's per-request logger (`request.log`, bound to the request id), made on first use: the
 * pino child (bindings serialised, level methods set up: ~1.5 µs) is only built when something is
 * logged at an enabled level, which at LOG_LEVEL=log/warn/error is almost never (a queue-ID request
 * costs ~25 µs of CPU in all; docs/performance.md, the hot path section). Same lines as an eager child.
 */
export class LazyRequestLogger {
  private real: PinoLogger | undefined;

  constructor(
    private readonly parent: PinoLogger,
    private readonly bound: pino.Bindings,
  ) {}

  private get logger(): PinoLogger {
    return (this.real ??= this.parent.child(this.bound));
  }

  get level(): string {
    return (this.real ?? this.parent).level;
  }
  set level(level: string) {
    this.logger.level = level;
  }
  isLevelEnabled(level: string): boolean {
    return (this.real ?? this.parent).isLevelEnabled(level);
  }
  bindings(): pino.Bindings {
    return this.logger.bindings();
  }
  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): PinoLogger {
    return this.logger.child(bindings, options);
  }
  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  private write(level: pino.Level, args: unknown[]): void {
    if (this.real === undefined && !this.parent.isLevelEnabled(level)) {
      return;
    }
    const logger = this.logger;
    Reflect.apply(logger[level], logger, args);
  }
}
