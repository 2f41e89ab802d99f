import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { METRICS_CONFIG } from '../config/config-tokens';
import { MetricsConfig } from '../config/metrics-config';
import { assertBearerToken } from '../common/bearer-token';

/** With METRICS_TOKEN set, `GET /metrics` needs `Authorization: Bearer <METRICS_TOKEN>` (else 401); unset, it is open. */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly expected: Buffer | undefined;

  constructor(@Inject(METRICS_CONFIG) config: MetricsConfig) {
    this.expected = config.token === undefined ? undefined : Buffer.from(config.token);
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
