import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { assertBearerToken } from '../common/bearer-token';

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
    assertBearerToken(request.headers, this.expected, 'METRICS_TOKEN', 'metrics');
    return true;
  }
}
