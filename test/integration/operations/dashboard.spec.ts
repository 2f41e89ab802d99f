import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { BrowserContext, Page, chromium } from 'playwright-core';
import { appSuite } from '../../support/app-suite';
import { pollUntil } from '../../support/poll';
import { ADMIN_TOKEN } from '../../support/test-env';

const CHROMIUM = '/usr/bin/chromium';

/** The page's document, as the predicates of page.waitForFunction (run in the page) see it. */
interface PageGlobal {
  document: {
    querySelectorAll(selector: string): { length: number };
    querySelector(selector: string): { textContent: string | null; getAttribute(name: string): string | null } | null;
  };
}

/** What a chart's series drew: its data attributes and the polyline's y range (SVG units). */
interface DrawnSeries {
  count: number;
  max: number;
  minY: number;
  maxY: number;
}

/** Reads one drawn series of a chart, in the page; null when not drawn. */
function drawnSeries(page: Page, chart: string, series: string): Promise<DrawnSeries | null> {
  return page.evaluate(
    ([c, n]) => {
      const doc = (globalThis as unknown as PageGlobal).document;
      const line = doc.querySelector(`#${c} polyline[data-series="${n}"]`);
      if (!line) {
        return null;
      }
      const ys = (line.getAttribute('points') ?? '')
        .split(' ')
        .filter((p) => p !== '')
        .map((p) => Number(p.split(',')[1]));
      return { count: Number(line.getAttribute('data-count')), max: Number(line.getAttribute('data-max')), minY: Math.min(...ys), maxY: Math.max(...ys) };
    },
    [chart, series] as const,
  );
}

/** Polls until the series drew at least `points` points with a non-zero value. */
async function waitForData(page: Page, chart: string, series: string, points = 2): Promise<DrawnSeries> {
  await page.waitForFunction(
    ([c, n, min]) => {
      const line = (globalThis as unknown as PageGlobal).document.querySelector(`#${c} polyline[data-series="${n}"]`);
      return !!line && Number(line.getAttribute('data-count')) >= min && Number(line.getAttribute('data-max')) > 0;
    },
    [chart, series, points] as const,
    { polling: 100 },
  );
  return (await drawnSeries(page, chart, series)) as DrawnSeries;
}

describe('admin dashboard in headless Chromium', () => {
  const suite = appSuite('dashboard');
  let app: NestFastifyApplication;
  let browser: BrowserContext;
  let page: Page;
  let profileDir: string;
  let base: string;
  const consoleProblems: string[] = [];

  beforeAll(async () => {
    // Charts sample every 250 ms (state read each time); the forecast needs 1/12 of its 60 s window.
    app = await suite.start({
      METRICS_HISTORY_INTERVAL_MS: '250',
      METRICS_STATE_TTL_MS: '0',
      CAPACITY_FORECAST_WINDOW_MS: '60000',
      QUEUE_REFILL_AHEAD: 'true',
    });
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
    base = base.replace('[::1]', '127.0.0.1');
    profileDir = mkdtempSync(join(tmpdir(), 'shardleaf-chromium-'));
    suite.defer(() => rmSync(profileDir, { recursive: true, force: true }));
    // A fresh profile directory each run (Playwright's way of passing --user-data-dir).
    browser = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 1040 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    suite.defer(() => browser.close());
    page = browser.pages()[0] ?? (await browser.newPage());
    // Until the wrong-token test: a clean console, and no request the server refused.
    page.on('console', (msg) => {
      if (msg.type() === 'error' || msg.type() === 'warning') {
        consoleProblems.push(`${msg.type()}: ${msg.text()} ${msg.location().url}`);
      }
    });
    page.on('response', (res) => {
      if (res.status() >= 400) {
        consoleProblems.push(`HTTP ${res.status()} ${res.url()}`);
      }
    });
    page.on('requestfailed', (req) => consoleProblems.push(`failed ${req.url()}`));
  });

  it('logs in, creates an app, shows its 64 shards, refills and shows the new depth', async () => {
    const response = await page.goto(`${base}/dashboard`);
    // A browser with a window asks for /favicon.ico unless the page names an icon (a 404 in its
    // console): the page's icon is an empty data: URL, which its content security policy allows.
    expect(await page.getAttribute('link[rel=icon]', 'href')).toBe('data:,');
    expect(response?.headers()['content-security-policy']).toContain('img-src data:');
    await page.fill('#token', ADMIN_TOKEN);
    await page.click('#login button[type=submit]');
    await page.waitForSelector('#main:not(.hidden)');
    // The snowflake worker of this instance is shown.
    await page.waitForSelector('#snowflake td');
    expect(await page.textContent('#snowflake')).toContain('mysql');
    expect(await page.textContent('#snowflake')).toContain('leaf (41/10/12 bits, worker ids 0..1023)');

    await page.fill('#create input[name=appId]', '42');
    await page.fill('#create input[name=appName]', 'browser');
    await page.fill('#create input[name=step]', '300');
    await page.click('#create button[type=submit]');
    await page.waitForSelector('#apps tr[data-app-id="42"]');
    await page.waitForFunction(() => (globalThis as unknown as PageGlobal).document.querySelectorAll('#shards tbody tr').length === 64);
    expect(await page.textContent('#app-title')).toContain('64 shards');
    const depthOf = (shard: number) => page.textContent(`#shards tr[data-shard="${shard}"] td:nth-child(2)`);
    expect(await depthOf(7)).toBe('0');

    await page.click('#refill');
    await page.waitForFunction(
      () => (globalThis as unknown as PageGlobal).document.querySelector('#shards tr[data-shard="7"] td:nth-child(2)')?.textContent === '300',
    );
    // The apps table is reloaded by its own request, in parallel with the shards table: wait for it too.
    await page.waitForFunction(
      () => (globalThis as unknown as PageGlobal).document.querySelector('#apps tr[data-app-id="42"] td:nth-child(5)')?.textContent === '19,200',
    );
    // 64 × 300 queued: with separators (exact below a million), and exact in the title.
    expect(await page.getAttribute('#apps tr[data-app-id="42"] td:nth-child(5)', 'title')).toBe('19,200');
    // This instance's refill size of the shard (the step: no refill has grown it).
    expect(await page.textContent('#shards tr[data-shard="7"] td:nth-child(5)')).toBe('300');
    expect(await page.textContent('#message')).toBe('');
    // No limit: said in words, and the index range left in a readable magnitude (exact in the title).
    expect(await page.textContent('#apps tr[data-app-id="42"] td:nth-child(4)')).toBe('unlimited');
    expect(await page.textContent('#apps tr[data-app-id="42"] td:nth-child(6)')).toMatch(/^unlimited: 36\.0\d quadrillion$/);
    expect(await page.getAttribute('#apps tr[data-app-id="42"] td:nth-child(6)', 'title')).toMatch(/^36,028,79\d,\d{3},\d{3},\d{3}$/);
    expect(await page.textContent('#shards tr[data-shard="7"] td:nth-child(7)')).toMatch(/^562\.9\d trillion$/);
  });

  it('draws live charts of real traffic and forecasts when an app runs out', async () => {
    // An app with a limit (about 65,000 IDs per shard) next to the unlimited app 42.
    const create = await fetch(`${base}/admin/apps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ appId: 7, appName: 'orders', step: 500, maxLimitId: '1073741823' }),
    });
    expect(create.status).toBe(201);
    await fetch(`${base}/admin/segment/tags`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tag: 'invoices', step: 1000 }),
    });
    await page.click('#reload');
    await page.waitForSelector('#apps tr[data-app-id="7"]');
    // Traffic over some history points, and on until the screenshot: a varying load of queue IDs
    // on both apps, segment and snowflake IDs, and some bad requests (4xx). The charts must show it.
    let served = 0;
    let rounds = 0;
    let stopped = false;
    const statuses: number[] = [];
    const get = async (path: string) => {
      const res = await fetch(`${base}${path}`);
      await res.text();
      statuses.push(res.status);
      if (res.status === 200) {
        served++;
      }
    };
    let trafficError: unknown = null;
    const traffic = (async () => {
      for (let round = 0; !stopped; round++) {
        const burst = 2 + (round % 10);
        const calls: Array<Promise<void>> = [];
        for (let i = 0; i < burst; i++) {
          calls.push(get(`/api/id/7?gatePass=user${(round * 7 + i) % 50}&count=20`));
          calls.push(get(`/api/id/42?gatePass=user${i}&count=5`));
          calls.push(get(`/api/segment/get/invoices?count=10`));
          calls.push(get(`/api/snowflake/get/order?count=${(round % 40) + 1}`));
        }
        calls.push(get('/api/id/99?gatePass=nobody'));
        await Promise.all(calls);
        rounds = round + 1;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })().catch((err: unknown) => {
      trafficError = err;
    });
    try {
      await pollUntil('40 rounds of traffic', () => rounds >= 40 || trafficError !== null, { timeoutMs: 60_000 });
      expect(trafficError).toBeNull();
      for (const generator of ['queue', 'segment', 'snowflake']) {
        const drawn = await waitForData(page, 'chart-ids', generator);
        // Drawn above the baseline somewhere: real values, not a flat line at 0.
        expect(drawn.minY).toBeLessThan(drawn.maxY);
      }
      expect((await waitForData(page, 'chart-depth', 'app 7')).max).toBeGreaterThan(0);
      expect((await waitForData(page, 'chart-refills', 'refills', 1)).max).toBeGreaterThan(0);
      expect((await waitForData(page, 'chart-errors', '4xx', 1)).max).toBeGreaterThan(0);
      // The forecast column: app 7 runs out at the measured rate; app 42 has no limit but the
      // 49-bit index range.
      await page.waitForFunction(
        () => /^\d+ (s|min|h|days|years)$/.test((globalThis as unknown as PageGlobal).document.querySelector('#apps tr[data-app-id="7"] td.runs-out')?.textContent ?? ''),
        undefined,
        { polling: 100 },
      );
      expect(await page.textContent('#apps tr[data-app-id="42"] td.runs-out')).toMatch(/years|never at this rate/);
      expect(await page.textContent('#message')).toBe('');
      mkdirSync('test-output', { recursive: true });
      await page.screenshot({ path: 'test-output/dashboard.png' });
    } finally {
      stopped = true;
      await traffic;
    }
    expect(trafficError).toBeNull();
    expect(served).toBeGreaterThan(400);
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
    // The page itself (the favicon included) asked for nothing that failed.
    expect(consoleProblems).toEqual([]);
  });

  it('creates a number format and shows its period and last sequence', async () => {
    await page.fill('#create-number input[name=key]', 'orders');
    await page.fill('#create-number input[name=pattern]', 'ORD{yyyyMMdd}{seq:6}');
    await page.selectOption('#create-number select[name=resetPeriod]', 'daily');
    await page.fill('#create-number input[name=step]', '10');
    await page.click('#create-number button[type=submit]');
    await page.waitForSelector('#numbers tr[data-key="orders"]');
    expect(await page.textContent('#numbers tr[data-key="orders"] td:nth-child(6)')).toBe('-');
    // One number: the first segment (step 10) holds 1..10, 10 % is not used yet, so nothing is preloaded.
    const got = await fetch(`${base}/api/number/orders`);
    expect(got.status).toBe(200);
    await page.click('#reload');
    await page.waitForFunction(
      () => (globalThis as unknown as PageGlobal).document.querySelector('#numbers tr[data-key="orders"] td:nth-child(6)')?.textContent === '10',
    );
    expect(await page.textContent('#numbers tr[data-key="orders"] td:nth-child(5)')).toMatch(/^\d{8}$/);
    expect(await page.textContent('#numbers tr[data-key="orders"] td:nth-child(8)')).toMatch(/^\d{8}: 2\.\.10$/);
    expect(await page.textContent('#message')).toBe('');
  });

  it('refuses a wrong token and returns to the login form', async () => {
    await page.click('#logout');
    await page.fill('#token', 'not-the-token');
    await page.click('#login button[type=submit]');
    await page.waitForSelector('#login:not(.hidden)');
    expect(await page.textContent('#message')).toContain('invalid admin token');
  });
});
