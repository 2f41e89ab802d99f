import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ADMIN_CONFIG, AdminConfig } from '../config/config-tokens';
import { assertBearerToken } from './bearer-token';
import { ErrorKind, IdGenError } from './id-gen.error';

/** `Authorization: Bearer <ADMIN_TOKEN>`; with no ADMIN_TOKEN configured the admin API is off. */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected: Buffer | undefined;

  constructor(@Inject(ADMIN_CONFIG) admin: AdminConfig) {
    this.expected = admin.token === undefined ? undefined : Buffer.from(admin.token);
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
