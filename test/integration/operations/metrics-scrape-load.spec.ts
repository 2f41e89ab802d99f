import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { MetricsStateReader } from '../../../src/metrics/metrics-state.reader';
import { QueueStatePort } from '../../../src/queue-id/queue-state.port';
import { appSuite } from '../../support/app-suite';
import { expectError, request } from '../../support/test-env';

const METRICS_TOKEN = 'metrics-secret-token';

function sample(text: string, nameAndLabels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${nameAndLabels} `));
  return line === undefined ? undefined : Number(line.slice(nameAndLabels.length + 1));
}

/** Issue #8: scrapes cannot drive the id_alloc SELECT and the LLEN sweep; /metrics may need a token. */
describe('/metrics under scrape load, and METRICS_TOKEN', () => {
  const suite = appSuite('metricsload');

  /** Counts the state reads of `app` and the queue reads (one SELECT of id_alloc + one LLEN sweep each), spied on its own collaborators. */
  function spies(app: NestFastifyApplication) {
    return {
      reads: jest.spyOn(app.get(MetricsStateReader), 'read'),
      selects: jest.spyOn(app.get(QueueStatePort), 'read'),
    };
  }

  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('reads the state once per TTL, however many scrapes run at once or in a row', async () => {
    const app = await suite.start({ METRICS_STATE_TTL_MS: '600000' });
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 5, appName: 'load', step: 100 } })).status).toBe(201);
    expect((await request(app, 'GET', '/api/id/5?gatePass=alice', { token: null })).status).toBe(200);
    const { reads, selects } = spies(app);

    const concurrent = await Promise.all(Array.from({ length: 40 }, () => request(app, 'GET', '/metrics', { token: null })));
    expect(concurrent.map((r) => r.status)).toEqual(Array(40).fill(200));
    const queued = sample(concurrent[0].body, 'shardleaf_queue_length{app="5"}');
    expect(queued).toBe(99);
    expect(reads).toHaveBeenCalledTimes(1);
    expect(selects).toHaveBeenCalledTimes(1);

    // Scrapes between refreshes serve the cached values: the queue changed, the gauge did not.
    expect((await request(app, 'GET', '/api/id/5?gatePass=alice&count=9', { token: null })).status).toBe(200);
    for (let i = 0; i < 20; i++) {
      const res = await request(app, 'GET', '/metrics', { token: null });
      expect(res.status).toBe(200);
      expect(sample(res.body, 'shardleaf_queue_length{app="5"}')).toBe(99);
      // Counters are not cached.
      expect(sample(res.body, 'shardleaf_ids_issued_total{generator="queue"}')).toBe(10);
    }
    expect(reads).toHaveBeenCalledTimes(1);
    expect(selects).toHaveBeenCalledTimes(1);
  });

  it('with METRICS_STATE_TTL_MS=0 reads on every scrape, once per scrape', async () => {
    const app = await suite.start({ METRICS_STATE_TTL_MS: '0' });
    const { reads, selects } = spies(app);
    for (let i = 0; i < 5; i++) {
      expect((await request(app, 'GET', '/metrics', { token: null })).status).toBe(200);
    }
    expect(reads).toHaveBeenCalledTimes(5);
    expect(selects).toHaveBeenCalledTimes(5);
  });

  it('is open when METRICS_TOKEN is unset', async () => {
    const app = suite.app;
    expect((await request(app, 'GET', '/metrics', { token: null })).status).toBe(200);
    expect((await request(app, 'GET', '/metrics', { token: 'anything-at-all' })).status).toBe(200);
  });

  it('needs Authorization: Bearer <METRICS_TOKEN> when it is set; 401 otherwise, before any state read', async () => {
    const app = await suite.start({ METRICS_TOKEN });
    const { reads } = spies(app);
    for (const token of [null, 'wrong-token-value', 'test-admin-token', `${METRICS_TOKEN}x`]) {
      const res = await request(app, 'GET', '/metrics', { token });
      const body = expectError(res, 401, -101);
      expect(res.json()).toEqual({ code: -101, error: 'UNAUTHORIZED', message: body.message });
    }
    expectError(await request(app, 'GET', '/metrics', { token: null, headers: { authorization: METRICS_TOKEN } }), 401, -101);
    expect(reads).not.toHaveBeenCalled();

    const ok = await request(app, 'GET', '/metrics', { token: METRICS_TOKEN });
    expect(ok.status).toBe(200);
    expect(ok.contentType).toContain('text/plain');
    expect(sample(ok.body, 'shardleaf_http_errors_total{route="/metrics",status="401",error="UNAUTHORIZED"}')).toBe(5);
    expect(reads).toHaveBeenCalledTimes(1);
  });
});
