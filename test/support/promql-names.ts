/**
 * What a PromQL expression refers to, for checking dashboards and alerting rules against what
 * the service exports: the metric names and, per selector, its label matchers. A small lexer,
 * not a PromQL parser: enough for the expressions this project ships (tested in
 * test/unit/metrics/promql-names.spec.ts). Grafana variables ($instance, ${x},
 * $__rate_interval) are accepted.
 */
export interface Matcher {
  label: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

export interface Selector {
  metric: string;
  matchers: Matcher[];
}

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);

/** Every metric selector of `expr`, in order (a metric may appear several times). */
export function selectorsOf(expr: string): Selector[] {
  // Range and subquery brackets ([5m], [$__rate_interval], [1h:5m]) name no metric.
  let rest = expr.replace(/\[[^\]]*\]/g, ' ');
  const out: Selector[] = [];
  // Label lists of by/without/on/ignoring/group_left/group_right name labels, not metrics.
  rest = rest.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, ' ');
  // A selector: an optional metric name, then an optional {matchers}.
  const selector = /(?<![\w.:$])([a-zA-Z_:][\w:]*)?\s*(\{((?:[^}"]|"(?:[^"\\]|\\.)*")*)\})?/g;
  let m: RegExpExecArray | null;
  while ((m = selector.exec(rest)) !== null) {
    if (m[0] === '') {
      selector.lastIndex++;
      continue;
    }
    const name = m[1];
    const braces = m[3];
    if (name === undefined && braces === undefined) {
      continue;
    }
    const after = rest.slice(selector.lastIndex);
    if (name !== undefined && braces === undefined && (/^\s*\(/.test(after) || KEYWORDS.has(name.toLowerCase()))) {
      // A function or aggregation call, or a keyword.
      continue;
    }
    if (name === undefined) {
      throw new Error(`a selector without a metric name in: ${expr}`);
    }
    out.push({ metric: name, matchers: braces === undefined ? [] : matchersOf(braces) });
  }
  return out;
}

function matchersOf(body: string): Matcher[] {
  const out: Matcher[] = [];
  const re = /\s*([a-zA-Z_][\w]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*,?/gy;
  let m: RegExpExecArray | null;
  while ((m = re.exec(body)) !== null) {
    out.push({ label: m[1], op: m[2] as Matcher['op'], value: m[3].replace(/\\(.)/g, '$1') });
    if (re.lastIndex >= body.length) {
      break;
    }
  }
  if (body.trim() !== '' && re.lastIndex < body.trimEnd().length) {
    throw new Error(`unreadable matchers {${body}}`);
  }
  return out;
}

/** Families of a Prometheus text exposition: the sample names each may show, with their labels. */
export function exportedSamples(exposition: string): Map<string, Set<string>> {
  const samples = new Map<string, Set<string>>();
  const add = (name: string) => {
    if (!samples.has(name)) {
      samples.set(name, new Set());
    }
    return samples.get(name) as Set<string>;
  };
  for (const line of exposition.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      const [, family, kind] = type;
      const names = kind === 'histogram' ? ['_bucket', '_sum', '_count'] : kind === 'summary' ? ['', '_sum', '_count'] : [''];
      names.forEach((suffix) => add(family + suffix));
      continue;
    }
    if (line === '' || line.startsWith('#')) {
      continue;
    }
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? /.exec(line);
    if (sample) {
      const labels = add(sample[1]);
      for (const pair of (sample[2] ?? '').matchAll(/([a-zA-Z_]\w*)="/g)) {
        labels.add(pair[1]);
      }
    }
  }
  return samples;
}
