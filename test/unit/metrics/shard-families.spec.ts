import { Gauge, Registry } from 'prom-client';
import { SERIES_PER_SLICE, ShardFamilies } from '../../../src/metrics/shard-families';

interface Row {
  app: number;
  shard: number;
  length: number | null;
}

const LENGTH = { name: 'test_queue_length', help: 'Indexes queued (a help with a \\ backslash,\nand a newline)' };

function rowsOf(n: number): Row[] {
  const special = [0, -1, 1.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, null];
  return Array.from({ length: n }, (_, i) => ({
    app: Math.floor(i / 64),
    shard: i % 64,
    length: i < special.length ? special[i] : (i * 7919) % 100_003,
  }));
}

/** prom-client's text for the same gauge (Registry.getSingleMetricAsString, its documented API). */
async function promClientText(rows: readonly Row[]): Promise<string> {
  const register = new Registry();
  const gauge = new Gauge({ ...LENGTH, labelNames: ['app', 'shard'], registers: [register] });
  for (const r of rows) {
    if (r.length !== null) {
      gauge.set({ app: r.app, shard: r.shard }, r.length);
    }
  }
  return register.getSingleMetricAsString(LENGTH.name);
}

function familiesOf(rows: readonly Row[], shared = true): ShardFamilies {
  const families = new ShardFamilies();
  families.add({ ...LENGTH, shared, rows: async () => rows, value: (r) => r.length });
  return families;
}

describe('ShardFamilies: per-shard gauges written in slices after the registry', () => {
  it.each([0, 1, SERIES_PER_SLICE - 1, SERIES_PER_SLICE, SERIES_PER_SLICE + 1, 2_500])(
    '%d rows: the same text as prom-client writes for the gauge (a row without a value left out)',
    async (n) => {
      // Fails when prom-client's exposition changes underneath (escaping, values, layout).
      const rows = rowsOf(n);
      expect(await familiesOf(rows).render(true)).toBe(await promClientText(rows));
    },
  );

  it('writes shared families only on the leader, its own ones everywhere; families apart by a blank line', async () => {
    const families = new ShardFamilies();
    families.add({ name: 'a_shared', help: 'a', shared: true, rows: async () => rowsOf(2), value: (r) => r.length });
    families.add({ name: 'b_own', help: 'b', shared: false, rows: async () => rowsOf(2), value: (r) => r.length });
    const leader = await families.render(true);
    expect(leader).toContain('# TYPE a_shared gauge');
    expect(leader).toContain('\n\n# HELP b_own b');
    const other = await families.render(false);
    expect(other).not.toContain('a_shared');
    expect(other.startsWith('# HELP b_own b\n# TYPE b_own gauge\nb_own{app="0",shard="0"} 0')).toBe(true);
    expect(await new ShardFamilies().render(true)).toBe('');
  });

  it('lets the event loop turn between slices while it writes', async () => {
    const families = familiesOf(rowsOf(SERIES_PER_SLICE * 5));
    let turns = 0;
    let done = false;
    const tick = (): void => {
      if (!done) {
        turns++;
        setImmediate(tick);
      }
    };
    setImmediate(tick);
    await families.render(true);
    done = true;
    expect(turns).toBeGreaterThanOrEqual(4);
  });

  it("prom-client's exposition ends with one newline, so the families append after a blank line", async () => {
    const register = new Registry();
    new Gauge({ name: 'x', help: 'x', registers: [register] }).set(1);
    expect(await register.metrics()).toBe('# HELP x x\n# TYPE x gauge\nx 1\n');
  });
});
