import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { assertBearerToken } from './bearer-token';
import { ErrorKind, IdGenError } from './id-gen.error';

/** `Authorization: Bearer <ADMIN_TOKEN>`; with no ADMIN_TOKEN configured the admin API is off. */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected: Buffer | undefined;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.expected = config.admin.token === undefined ? undefined : Buffer.from(config.admin.token);
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.expected === undefined) {
      throw new IdGenError(ErrorKind.AdminDisabled, 'the admin API is disabled: set ADMIN_TOKEN to enable it');
    }
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>();
    assertBearerToken(request.headers, this.expected, 'ADMIN_TOKEN', 'admin');
    return true;
  }
}
