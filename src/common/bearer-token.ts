import { timingSafeEqual } from 'node:crypto';
import { ErrorKind, IdGenError } from './id-gen.error';

type Headers = Record<string, string | string[] | undefined>;

/**
 * Checks `Authorization: Bearer <token>` against `expected` in constant time; throws UNAUTHORIZED
 * (401) naming `variable` (the setting that holds the token) when it is missing or wrong.
 */
export function assertBearerToken(headers: Headers, expected: Buffer, variable: string, what: string): void {
  const header = headers.authorization;
  const match = typeof header === 'string' ? /^Bearer ([^\s]+)$/i.exec(header.trim()) : null;
  if (!match) {
    throw new IdGenError(ErrorKind.Unauthorized, `missing Authorization: Bearer <${variable}> header`);
  }
  const given = Buffer.from(match[1]);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new IdGenError(ErrorKind.Unauthorized, `invalid ${what} token`);
  }
}
