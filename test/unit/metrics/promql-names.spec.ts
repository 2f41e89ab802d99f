import { exportedSamples, selectorsOf } from '../../support/promql-names';

describe('selectorsOf (the PromQL lexer of the monitoring-assets test)', () => {
  it('finds metric names, not functions, aggregations, keywords, label lists or durations', () => {
    const expr = `sum by (instance) (rate(a_total{status=~"5.."}[5m])) / sum by (instance) (rate(b_total[$__rate_interval])) > 0.05
      and on (instance, tag) (c == 0) or histogram_quantile(0.99, sum by (le) (rate(d_bucket[1h:5m]))) unless e offset 1e3`;
    expect(selectorsOf(expr).map((s) => s.metric)).toEqual(['a_total', 'b_total', 'c', 'd_bucket', 'e']);
  });

  it('reads matchers, with escapes and every operator', () => {
    expect(selectorsOf('x{a="1", b!="two",c=~"A|B", d!~"q\\"z"}')).toEqual([
      {
        metric: 'x',
        matchers: [
          { label: 'a', op: '=', value: '1' },
          { label: 'b', op: '!=', value: 'two' },
          { label: 'c', op: '=~', value: 'A|B' },
          { label: 'd', op: '!~', value: 'q"z' },
        ],
      },
    ]);
  });

  it('accepts Grafana variables in matchers and ranges', () => {
    expect(selectorsOf('rate(m{instance=~"$instance"}[$__rate_interval]) * 60')).toEqual([
      { metric: 'm', matchers: [{ label: 'instance', op: '=~', value: '$instance' }] },
    ]);
  });

  it('refuses a selector without a metric name', () => {
    expect(() => selectorsOf('{__name__="x"}')).toThrow(/without a metric name/);
  });
});

describe('exportedSamples', () => {
  it('lists counter, gauge and histogram sample names with their labels', () => {
    const text = [
      '# HELP a_total A.',
      '# TYPE a_total counter',
      'a_total{route="/x",status="200"} 3',
      '# TYPE h histogram',
      'h_bucket{le="0.1",trigger="ahead"} 1',
      '# TYPE g gauge',
      '',
    ].join('\n');
    const s = exportedSamples(text);
    expect([...s.keys()].sort()).toEqual(['a_total', 'g', 'h_bucket', 'h_count', 'h_sum']);
    expect([...(s.get('a_total') ?? [])]).toEqual(['route', 'status']);
    expect([...(s.get('h_bucket') ?? [])]).toEqual(['le', 'trigger']);
  });
});
