/**
 * The Prometheus text exposition of a gauge with the labels `app` and `shard`, or `app` alone,
 * written the way prom-client 15 writes it (Registry.getMetricsAsString): `# HELP` and `# TYPE`
 * lines, then one `name{app="…",shard="…"} value` line per series, joined by newlines, no trailing
 * newline. Pure: the slicing between event-loop turns is the caller's (shard-families.ts).
 */

/** A row of one app shard (its value is read by the caller's accessor). */
export interface ShardRow {
  app: number;
  shard: number;
}

/** prom-client's escapeString (HELP text and label values): backslash and newline. */
function escapeText(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** prom-client's getValueAsString. */
function valueText(value: number): string {
  if (Number.isNaN(value)) {
    return 'Nan';
  }
  if (!Number.isFinite(value)) {
    return value < 0 ? '-Inf' : '+Inf';
  }
  return `${value}`;
}

/** The `# HELP` and `# TYPE` lines of a gauge. */
export function gaugeHeader(name: string, help: string): string {
  const escaped = escapeText(name);
  return `# HELP ${escaped} ${escapeText(help)}\n# TYPE ${escaped} gauge`;
}

/** The series lines of rows[from..to), joined by newlines (empty for an empty slice). */
export function shardSeriesLines<R extends ShardRow>(
  name: string,
  rows: readonly R[],
  value: (row: R) => number,
  from: number,
  to: number,
): string {
  const escaped = escapeText(name);
  const lines = new Array<string>(Math.max(0, to - from));
  for (let i = from; i < to; i++) {
    const row = rows[i];
    lines[i - from] = `${escaped}{app="${row.app}",shard="${row.shard}"} ${valueText(value(row))}`;
  }
  return lines.join('\n');
}

/** The series lines `name{app="…"} value` of the rows with a value (null: left out), joined by newlines. */
export function appSeriesLines<R extends { app: number }>(name: string, rows: readonly R[], value: (row: R) => number | null): string {
  const escaped = escapeText(name);
  const lines: string[] = [];
  for (const row of rows) {
    const v = value(row);
    if (v !== null) {
      lines.push(`${escaped}{app="${row.app}"} ${valueText(v)}`);
    }
  }
  return lines.join('\n');
}
