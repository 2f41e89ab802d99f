import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { appSuite } from '../../support/app-suite';
import { request } from '../../support/test-env';

describe('GET / (a newcomer’s first look)', () => {
  const suite = appSuite('home');
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await suite.start();
  });

  it('answers JSON with links to the docs, the dashboard, readiness and metrics, each of them served', async () => {
    const res = await request(app, 'GET', '/', { token: null });
    expect(res.status).toBe(200);
    expect(res.contentType).toContain('application/json');
    const links = res.json<{ links: Record<string, string> }>().links;
    expect(links).toEqual({ docs: '/docs', dashboard: '/dashboard', ready: '/health/ready', metrics: '/metrics' });
    for (const href of Object.values(links)) {
      expect({ href, status: (await request(app, 'GET', href, { token: null })).status }).toEqual({ href, status: 200 });
    }
  });

  it('answers a browser with a small HTML page of the same links', async () => {
    const res = await request(app, 'GET', '/', { token: null, headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(res.status).toBe(200);
    expect(res.contentType).toContain('text/html');
    for (const href of ['/docs', '/dashboard', '/health/ready', '/metrics']) {
      expect(res.body).toContain(`<a href="${href}">`);
    }
  });
});
