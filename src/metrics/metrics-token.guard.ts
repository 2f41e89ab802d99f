import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ErrorKind, IdGenError } from '../common/id-gen.error';

/** With METRICS_TOKEN set, `GET /metrics` needs `Authorization: Bearer <METRICS_TOKEN>` (else 401); unset, it is open. */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly expected: Buffer | undefined;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.expected = config.metrics.token === undefined ? undefined : Buffer.from(config.metrics.token);
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.expected === undefined) {
      return true;
    }
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>();
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer ([^\s]+)$/i.exec(header.trim()) : null;
    if (!match) {
      throw new IdGenError(ErrorKind.Unauthorized, 'missing Authorization: Bearer <METRICS_TOKEN> header');
    }
    const given = Buffer.from(match[1]);
    if (given.length !== this.expected.length || !timingSafeEqual(given, this.expected)) {
      throw new IdGenError(ErrorKind.Unauthorized, 'invalid metrics token');
    }
    return true;
  }
}
