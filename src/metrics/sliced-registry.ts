import { Metric, Registry } from 'prom-client';
import { ShardRow, gaugeHeader, shardSeriesLines } from './core/series-text';

/** Series written per event-loop turn: ~1–2 ms of work, so requests are served between slices. */
export const SERIES_PER_SLICE = 1000;

/** Lets the event loop run (I/O callbacks, other requests) before the next slice. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** prom-client's per-metric text renderer (Registry.prototype.getMetricsAsString, not in its types). */
type RenderOne = (this: Registry, metric: Metric) => Promise<string>;

const inherited = (Registry.prototype as unknown as { getMetricsAsString?: RenderOne }).getMetricsAsString;
if (typeof inherited !== 'function') {
  // Refuse to start rather than silently render the gauges twice or not at all.
  throw new Error('prom-client has no Registry.getMetricsAsString: sliced-registry.ts needs a review for this version');
}

/**
 * A prom-client Registry in which a per-shard gauge (one series per app shard: 16,384 at 256
 * apps) is written as text by the service, in slices of SERIES_PER_SLICE with a turn of the event
 * loop between them, instead of by prom-client in one synchronous step (reset, set and format of
 * every series: ~0.4–0.8 s at 16,384 series on a loaded 2-core machine, during which no request
 * was served). The text is the same, byte for byte (core/series-text.ts), and is written once per
 * state snapshot: scrapes that share a snapshot share it. The gauge itself stays registered as a
 * prom-client Gauge (getMetricsAsJSON and `get()` use its own collect).
 *
 * Any other metric, and every metric when default labels or OpenMetrics are set, is rendered by
 * prom-client as before.
 */
export class SlicedRegistry extends Registry {
  private readonly sliced = new Map<Metric, () => Promise<string>>();

  /**
   * Renders `gauge` (a gauge with the labels app and shard, in this order) from the rows of each
   * snapshot, in their order (as the gauge's collect sets them; one row per shard); `read` gives
   * the current snapshot (a new object when the state was read again).
   */
  renderShardGauge<S extends object, R extends ShardRow>(
    gauge: Metric,
    { name, help }: { name: string; help: string },
    read: () => Promise<S>,
    rows: (snapshot: S) => readonly R[],
    value: (row: R) => number,
  ): void {
    const texts = new WeakMap<S, Promise<string>>();
    this.sliced.set(gauge, async () => {
      const snapshot = await read();
      let text = texts.get(snapshot);
      if (!text) {
        text = renderSliced(name, help, rows(snapshot), value);
        texts.set(snapshot, text);
      }
      return text;
    });
  }

  /** Called by Registry.metrics() for each metric. */
  getMetricsAsString(metric: Metric): Promise<string> {
    const render = this.sliced.get(metric);
    if (render && this.contentType === Registry.PROMETHEUS_CONTENT_TYPE && !this.hasDefaultLabels()) {
      return render();
    }
    return (inherited as RenderOne).call(this, metric);
  }

  private hasDefaultLabels(): boolean {
    const labels = (this as unknown as { _defaultLabels?: object })._defaultLabels;
    return labels !== undefined && Object.keys(labels).length > 0;
  }
}

async function renderSliced<R extends ShardRow>(
  name: string,
  help: string,
  rows: readonly R[],
  value: (row: R) => number,
): Promise<string> {
  const parts = [gaugeHeader(name, help)];
  for (let from = 0; from < rows.length; from += SERIES_PER_SLICE) {
    await nextTurn();
    parts.push(shardSeriesLines(name, rows, value, from, Math.min(from + SERIES_PER_SLICE, rows.length)));
  }
  return parts.join('\n');
}
