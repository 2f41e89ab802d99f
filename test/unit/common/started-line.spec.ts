import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig } from '../../../src/config/load-config';
import { startedLine } from '../../../src/start-service';

/** An app as startedLine reads it: the listening port, and the snowflake worker id. */
function listeningApp(port: number): NestFastifyApplication {
  return {
    getHttpServer: () => ({ address: () => ({ address: '::', family: 'IPv6', port }) }),
    get: () => ({ workerId: 3 }),
  } as unknown as NestFastifyApplication;
}

describe('the start line', () => {
  it.each([
    ['0.0.0.0', 'http://0.0.0.0:8080:'],
    ['::', 'http://[::]:8080:'],
    ['::1', 'http://[::1]:8080:'],
    ['localhost', 'http://localhost:8080:'],
  ])('gives HOST=%s as a URL: %s', (host, url) => {
    const line = startedLine(loadConfig({ HOST: host, SNOWFLAKE_MODE: 'off' }), listeningApp(8080));
    expect(line.startsWith(`listening on ${url} queue IDs`)).toBe(true);
  });
});
