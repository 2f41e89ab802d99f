import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { BrowserContext, Page, chromium } from 'playwright-core';
import { ADMIN_TOKEN, TestEnv, createTestEnv, startApp } from '../../support/test-env';

const CHROMIUM = '/usr/bin/chromium';

/** The page's document, as the predicates of page.waitForFunction (run in the page) see it. */
interface PageGlobal {
  document: {
    querySelectorAll(selector: string): { length: number };
    querySelector(selector: string): { textContent: string | null } | null;
  };
}

describe('admin dashboard in headless Chromium', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;
  let browser: BrowserContext;
  let page: Page;
  let profileDir: string;
  let base: string;

  beforeAll(async () => {
    env = await createTestEnv('dashboard');
    app = await startApp(env.config());
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
    base = base.replace('[::1]', '127.0.0.1');
    profileDir = mkdtempSync(join(tmpdir(), 'shardleaf-chromium-'));
    // A fresh profile directory each run (Playwright's way of passing --user-data-dir).
    browser = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
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
    page = browser.pages()[0] ?? (await browser.newPage());
  });

  afterAll(async () => {
    await browser?.close();
    if (profileDir) {
      rmSync(profileDir, { recursive: true, force: true });
    }
    await app?.close();
    await env?.cleanup();
  });

  it('logs in, creates an app, shows its 64 shards, refills and shows the new depth', async () => {
    await page.goto(`${base}/dashboard`);
    await page.fill('#token', ADMIN_TOKEN);
    await page.click('#login button[type=submit]');
    await page.waitForSelector('#main:not(.hidden)');
    // The snowflake worker of this instance is shown.
    await page.waitForSelector('#snowflake td');
    expect(await page.textContent('#snowflake')).toContain('mysql');

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
    // The page reloads the shards and the apps table with separate requests: wait for both.
    await page.waitForFunction(() => {
      const doc = (globalThis as unknown as PageGlobal).document;
      return (
        doc.querySelector('#shards tr[data-shard="7"] td:nth-child(2)')?.textContent === '300' &&
        doc.querySelector('#apps tr[data-app-id="42"] td:nth-child(5)')?.textContent === String(64 * 300)
      );
    });
    expect(await page.textContent('#apps tr[data-app-id="42"] td:nth-child(5)')).toBe(String(64 * 300));
    // This instance's refill size of the shard (the step: no refill has grown it).
    expect(await page.textContent('#shards tr[data-shard="7"] td:nth-child(5)')).toBe('300');
    expect(await page.textContent('#message')).toBe('');
    mkdirSync('test-output', { recursive: true });
    await page.screenshot({ path: 'test-output/dashboard.png', fullPage: true });
  });

  it('refuses a wrong token and returns to the login form', async () => {
    await page.click('#logout');
    await page.fill('#token', 'not-the-token');
    await page.click('#login button[type=submit]');
    await page.waitForSelector('#login:not(.hidden)');
    expect(await page.textContent('#message')).toContain('invalid admin token');
  });
});
