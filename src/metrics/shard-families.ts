import { ShardRow, gaugeHeader, shardSeriesLines } from './core/series-text';

/** Series written per event-loop turn: ~1–2 ms of work, so requests are served between slices. */
export const SERIES_PER_SLICE = 1000;

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A gauge family with the labels app and shard (METRICS_PER_SHARD=true): one series per row. */
export interface ShardFamily<R extends ShardRow> {
  name: string;
  help: string;
  /** Shared state: written by the metrics leader only (metrics-leader.ts). */
  shared: boolean;
  /** The rows of this scrape, in (app, shard) order. */
  rows: () => Promise<readonly R[]>;
  /** A row's value; a row without one (null) is left out. */
  value: (row: R) => number | null;
}

/**
 * The per-shard gauge families, written as Prometheus text by the service after prom-client's
 * own exposition (Registry.metrics()), in slices of SERIES_PER_SLICE with a turn of the event
 * loop between them: at 256 apps each family holds 16,384 series, and writing them in one
 * synchronous step would hold every request for its whole duration. They are not prom-client
 * metrics: only the documented Registry API is used, nothing of its internals.
 */
export class ShardFamilies {
  private readonly families: Array<{ name: string; shared: boolean; render: () => Promise<string> }> = [];

  add<R extends ShardRow>(family: ShardFamily<R>): void {
    this.families.push({
      name: family.name,
      shared: family.shared,
      render: async () => {
        const rows = (await family.rows()).filter((r) => family.value(r) !== null);
        const parts = [gaugeHeader(family.name, family.help)];
        for (let from = 0; from < rows.length; from += SERIES_PER_SLICE) {
          await nextTurn();
          parts.push(shardSeriesLines(family.name, rows, (r) => family.value(r) as number, from, Math.min(from + SERIES_PER_SLICE, rows.length)));
        }
        return parts.join('\n');
      },
    });
  }

  /** The text of every family (shared ones only when `leader`), blocks separated by a blank line; '' for none. */
  async render(leader: boolean): Promise<string> {
    const texts: string[] = [];
    for (const f of this.families) {
      if (leader || !f.shared) {
        texts.push(await f.render());
      }
    }
    return texts.join('\n\n');
  }
}
