import { NestFastifyApplication } from '@nestjs/platform-fastify';
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
  for (let attempt = 0; attempt < 100; attempt++) {
    const res = await request(app, 'GET', '/health/ready', { token: null });
    if (res.status === status) {
      return res.json<Readiness>();
    }
    last = `${res.status} ${res.body}`;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`readiness never answered ${status}; last: ${last}`);
}
