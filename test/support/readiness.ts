import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { pollUntil } from './poll';
import { request } from './test-env';

/** The body of GET /health/ready (terminus). */
export interface Readiness {
  status: string;
  info?: Record<string, { status: string; message?: string }>;
  error?: Record<string, { status: string; message?: string }>;
}

/** Polls readiness until it has the wanted HTTP status (reconnects take a moment). */
export async function readinessUntil(app: NestFastifyApplication, status: number): Promise<Readiness> {
  let last = '';
  return pollUntil(
    () => `readiness to answer ${status}; last: ${last}`,
    async () => {
      const res = await request(app, 'GET', '/health/ready', { token: null });
      last = `${res.status} ${res.body}`;
      return res.status === status && res.json<Readiness>();
    },
    { intervalMs: 100 },
  );
}
