import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ErrorKind } from '../../../src/common/id-gen.error';
import { HistorySampler } from '../../../src/metrics/history.sampler';
import { Selector, exportedSamples, selectorsOf } from '../../support/promql-names';
import { appSuite } from '../../support/app-suite';
import { request } from '../../support/test-env';

const ROOT = join(__dirname, '../../..');
const RULES = join(ROOT, 'deploy/prometheus/shardleaf.rules.yml');
const GRAFANA = join(ROOT, 'deploy/grafana/shardleaf.json');
/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = new Set(['instance', 'job']);

/** The `expr:` of each rule: one line, or a `|` block of deeper-indented lines. */
function ruleExpressions(yaml: string): string[] {
  const lines = yaml.split('\n');
  const out: string[] = [];
  lines.forEach((line, i) => {
    const m = /^(\s*)expr:\s*(.*)$/.exec(line);
    if (!m) {
      return;
    }
    if (m[2] !== '|') {
      out.push(m[2]);
      return;
    }
    const block: string[] = [];
    for (let j = i + 1; j < lines.length && (lines[j].trim() === '' || lines[j].search(/\S/) > m[1].length); j++) {
      block.push(lines[j].trim());
    }
    out.push(block.join(' '));
  });
  return out;
}

interface GrafanaPanel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: Array<{ expr: string; refId: string }>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every expression of the rules and the Grafana dashboard names what /metrics exports, in both metric modes. */
describe.each([
  ['per-app series (the default)', 'monitoring', {}],
  ['METRICS_PER_SHARD=true', 'monitorshard', { METRICS_PER_SHARD: 'true' }],
])('monitoring assets (Prometheus rules, Grafana dashboard) against a running app: %s', (_mode, suiteName, modeEnv) => {
  const suite = appSuite(suiteName);
  let app: NestFastifyApplication;
  let samples: Map<string, Set<string>>;
  let exposition: string;

  beforeAll(async () => {
    // History timer off: the test ticks the sampler itself; a short forecast window.
    app = await suite.start({ ...modeEnv, METRICS_HISTORY_INTERVAL_MS: '0', METRICS_STATE_TTL_MS: '0', CAPACITY_FORECAST_WINDOW_MS: '1200' });
    const sampler = app.get(HistorySampler);
    // Traffic that gives every family samples: queue IDs (a demand refill), segment and
    // snowflake IDs, an error reply, and a capacity forecast.
    expect((await request(app, 'POST', '/admin/apps', { body: { appId: 5, appName: 'assets', step: 100, maxLimitId: '1638400000' } })).status).toBe(201);
    expect((await request(app, 'POST', '/admin/segment/tags', { body: { tag: 'assets', step: 50 } })).status).toBe(201);
    await sampler.tick();
    for (let round = 0; round < 3; round++) {
      // Real time between observations (the forecast needs 1/12 of its window of history).
      await sleep(150);
      expect((await request(app, 'GET', '/api/id/5?gatePass=alice&count=10', { token: null })).status).toBe(200);
      expect((await request(app, 'GET', '/api/segment/get/assets', { token: null })).status).toBe(200);
      expect((await request(app, 'GET', '/api/snowflake/get/x', { token: null })).status).toBe(200);
      expect((await request(app, 'GET', '/api/id/77?gatePass=bob', { token: null })).status).toBe(404);
      await sampler.tick();
    }
    // A number format used up: nine numbers, then 410 NUMBER_EXHAUSTED.
    expect((await request(app, 'POST', '/admin/numbers', { body: { key: 'assets', pattern: 'AS{seq:1}' } })).status).toBe(201);
    for (let i = 1; i <= 9; i++) {
      expect((await request(app, 'GET', '/api/number/assets', { token: null })).status).toBe(200);
    }
    expect((await request(app, 'GET', '/api/number/assets', { token: null })).status).toBe(410);
    const res = await request(app, 'GET', '/metrics', { token: null });
    expect(res.status).toBe(200);
    exposition = res.body;
    samples = exportedSamples(res.body);
  });

  /** Checks one selector: the metric is exported with samples, its labels exist, error kinds are real. */
  function check(where: string, s: Selector): string[] {
    const labels = samples.get(s.metric);
    if (labels === undefined) {
      return [`${where}: ${s.metric} is not exported`];
    }
    const problems: string[] = [];
    for (const m of s.matchers) {
      if (!TARGET_LABELS.has(m.label) && !labels.has(m.label)) {
        problems.push(`${where}: ${s.metric} has no label ${m.label} (has ${[...labels].join(', ') || 'none'})`);
      }
      if (m.label === 'error' && (m.op === '=' || m.op === '=~')) {
        for (const kind of m.value.split('|')) {
          if (!(Object.values(ErrorKind) as string[]).includes(kind)) {
            problems.push(`${where}: error kind ${kind} is not in the error catalog`);
          }
        }
      }
    }
    return problems;
  }

  it('every metric family the assets use has samples in this scrape (the check below is not vacuous)', () => {
    for (const name of [
      'shardleaf_queue_capacity_exhaustion_seconds',
      'shardleaf_queue_lowest_fill_ratio',
      'shardleaf_queue_lowest_shard_capacity',
      'shardleaf_queue_refill_duration_seconds_bucket',
      'shardleaf_backend_up',
      'shardleaf_segment_next_ready',
      'shardleaf_number_period_used_ratio',
    ]) {
      expect(samples.get(name)?.size ?? 0).toBeGreaterThan(0);
    }
  });

  it('a used-up number format: its 410s are counted as NUMBER_EXHAUSTED on the numbers route, its period at 1 (what ShardleafNumberExhausted and ShardleafNumberPeriodNearlyUsed read)', () => {
    expect(exposition).toContain('shardleaf_http_errors_total{route="/api/number/:key",status="410",error="NUMBER_EXHAUSTED"} 1\n');
    expect(exposition).toContain('shardleaf_number_period_used_ratio{format="assets"} 1\n');
  });

  it('alerting rules: every expression names exported metrics and labels', () => {
    const yaml = readFileSync(RULES, 'utf8');
    const exprs = ruleExpressions(yaml);
    // One expression per alert, as promtool counts them.
    expect(exprs).toHaveLength((yaml.match(/^\s*- alert:/gm) ?? []).length);
    expect(execFileSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' })).toContain(`SUCCESS: ${exprs.length} rules found`);
    const problems: string[] = [];
    let selectors = 0;
    exprs.forEach((expr, i) => {
      const found = selectorsOf(expr);
      expect(found.length).toBeGreaterThan(0);
      selectors += found.length;
      found.forEach((s) => problems.push(...check(`rule ${i + 1}`, s)));
    });
    expect(problems).toEqual([]);
    expect(selectors).toBeGreaterThanOrEqual(exprs.length);
  });

  it('Grafana dashboard: every panel query and the instance variable name exported metrics', () => {
    const dash = JSON.parse(readFileSync(GRAFANA, 'utf8')) as {
      uid: string;
      panels: GrafanaPanel[];
      templating: { list: Array<{ name: string; type: string; definition?: string }> };
    };
    expect(dash.uid).toBe('shardleaf');
    const ids = dash.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const problems: string[] = [];
    let queries = 0;
    for (const panel of dash.panels.filter((p) => p.type !== 'row')) {
      expect(panel.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(panel.targets?.length ?? 0).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) {
        queries++;
        const found = selectorsOf(target.expr);
        expect(found.length).toBeGreaterThan(0);
        found.forEach((s) => problems.push(...check(`panel "${panel.title}" ${target.refId}`, s)));
      }
    }
    const variable = dash.templating.list.find((v) => v.name === 'instance');
    const labelValues = /^label_values\((\w+),\s*(\w+)\)$/.exec(variable?.definition ?? '');
    expect(labelValues).not.toBeNull();
    problems.push(...check('variable instance', { metric: (labelValues as RegExpExecArray)[1], matchers: [] }));
    expect(problems).toEqual([]);
    expect(queries).toBeGreaterThanOrEqual(20);
  });

  it('the exhaustion gauge holds a finite forecast for the app with traffic', () => {
    const sampler = app.get(HistorySampler);
    const forecast = sampler.view().forecast.find((f) => f.app === 5);
    expect(forecast).toBeDefined();
    expect(forecast?.idsPerSecond).toBeGreaterThan(0);
    expect(forecast?.firstShard).toBe(0);
    expect(Number.isFinite(forecast?.secondsLeft)).toBe(true);
  });
});
