import { Counter, Gauge, Registry } from 'prom-client';
import { SERIES_PER_SLICE, SlicedRegistry } from '../../../src/metrics/sliced-registry';

interface Row {
  app: number;
  shard: number;
  length: number;
}

interface Snapshot {
  rows: Row[];
}

const LENGTH = { name: 'test_queue_length', help: 'Indexes queued (a help with a \\ backslash,\nand a newline)' };

/** The same metrics in a registry: a counter, the per-shard gauge, another gauge after it. */
function build(register: Registry, snapshot: () => Promise<Snapshot>, rowsRead: { count: number }): void {
  new Counter({ name: 'test_before_total', help: 'before', registers: [register] }).inc(3);
  const gauge = new Gauge({
    ...LENGTH,
    labelNames: ['app', 'shard'],
    registers: [register],
    async collect() {
      const s = await snapshot();
      this.reset();
      for (const r of s.rows) {
        this.set({ app: r.app, shard: r.shard }, r.length);
      }
    },
  });
  new Gauge({ name: 'test_after', help: 'after', registers: [register] }).set(7);
  if (register instanceof SlicedRegistry) {
    register.renderShardGauge(
      gauge,
      LENGTH,
      snapshot,
      (s) => {
        rowsRead.count++;
        return s.rows;
      },
      (r) => r.length,
    );
  }
}

function rowsOf(n: number): Row[] {
  const special = [0, -1, 1.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
  return Array.from({ length: n }, (_, i) => ({
    app: Math.floor(i / 64),
    shard: i % 64,
    length: i < special.length ? special[i] : (i * 7919) % 100_003,
  }));
}

describe('SlicedRegistry: per-shard gauges written in slices', () => {
  it.each([0, 1, SERIES_PER_SLICE - 1, SERIES_PER_SLICE, SERIES_PER_SLICE + 1, 2_500])(
    '%d series: the same text as prom-client writes',
    async (n) => {
      const snapshot: Snapshot = { rows: rowsOf(n) };
      const plain = new Registry();
      const sliced = new SlicedRegistry();
      const read = { count: 0 };
      build(plain, async () => snapshot, { count: 0 });
      build(sliced, async () => snapshot, read);
      const expected = await plain.metrics();
      expect(await sliced.metrics()).toBe(expected);
      expect(read.count).toBe(1);
      // prom-client's own per-metric path (and the JSON view) still use the gauge itself.
      expect(await sliced.getMetricsAsJSON()).toEqual(await plain.getMetricsAsJSON());
    },
  );

  it('writes the text once per snapshot: scrapes sharing one share it, a new snapshot is written again', async () => {
    let snapshot: Snapshot = { rows: rowsOf(3) };
    const sliced = new SlicedRegistry();
    const read = { count: 0 };
    build(sliced, async () => snapshot, read);
    const [a, b] = await Promise.all([sliced.metrics(), sliced.metrics()]);
    expect(a).toBe(b);
    await sliced.metrics();
    expect(read.count).toBe(1);
    snapshot = { rows: [{ app: 9, shard: 1, length: 42 }] };
    expect(await sliced.metrics()).toContain('test_queue_length{app="9",shard="1"} 42');
    expect(read.count).toBe(2);
  });

  it('lets the event loop turn between slices while it writes', async () => {
    const snapshot: Snapshot = { rows: rowsOf(SERIES_PER_SLICE * 5) };
    const sliced = new SlicedRegistry();
    build(sliced, async () => snapshot, { count: 0 });
    let turns = 0;
    let done = false;
    const tick = (): void => {
      if (!done) {
        turns++;
        setImmediate(tick);
      }
    };
    setImmediate(tick);
    await sliced.metrics();
    done = true;
    expect(turns).toBeGreaterThanOrEqual(4);
  });

  it('leaves default labels to prom-client (then the text is prom-client’s)', async () => {
    const snapshot: Snapshot = { rows: rowsOf(10) };
    const plain = new Registry();
    const sliced = new SlicedRegistry();
    build(plain, async () => snapshot, { count: 0 });
    const read = { count: 0 };
    build(sliced, async () => snapshot, read);
    plain.setDefaultLabels({ instance: 'a' });
    sliced.setDefaultLabels({ instance: 'a' });
    expect(await sliced.metrics()).toBe(await plain.metrics());
    expect(read.count).toBe(0);
  });
});
