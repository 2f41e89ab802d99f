import { appSeriesLines, gaugeHeader } from './series-text';

/** A gauge family with the label `app`: one series per row with a value. */
export interface AppFamily<R extends { app: number }> {
  name: string;
  help: string;
  /** Shared state: its series are written by the metrics leader only (its HELP and TYPE by every instance). */
  shared: boolean;
  /** A row's value; null leaves the row out (a bigint is written as a number, as prom-client's Gauge did). */
  value: (row: R) => number | bigint | null;
}

/**
 * Per-app gauge families written as Prometheus text (prom-client's layout, series-text.ts) from
 * one set of rows: a state read's per-app summaries, or the capacity forecast's apps. The rows
 * are replaced whole by each read, so the text is kept until they (or the leadership) change: a
 * scrape between two reads writes nothing again, where 256 apps × 6 prom-client gauges were
 * reset, set (label hashing) and formatted on every scrape (~5 ms warm, 20–35 ms in a fresh
 * process). Families are separated by a blank line, as in Registry.metrics(). Pure.
 */
export class AppFamiliesText<R extends { app: number }> {
  private kept: { rows: readonly R[]; leader: boolean; text: string } | null = null;

  constructor(private readonly families: ReadonlyArray<AppFamily<R>>) {}

  render(rows: readonly R[], leader: boolean): string {
    const kept = this.kept;
    if (kept !== null && kept.rows === rows && kept.leader === leader) {
      return kept.text;
    }
    const blocks = this.families.map((f) => {
      const header = gaugeHeader(f.name, f.help);
      if (f.shared && !leader) {
        return header;
      }
      const lines = appSeriesLines(f.name, rows, (row) => {
        const v = f.value(row);
        return v === null ? null : Number(v);
      });
      return lines === '' ? header : `${header}\n${lines}`;
    });
    const text = blocks.join('\n\n');
    this.kept = { rows, leader, text };
    return text;
  }
}
