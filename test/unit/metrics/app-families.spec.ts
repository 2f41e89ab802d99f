import { Gauge, Registry } from 'prom-client';
import { AppFamiliesText } from '../../../src/metrics/core/app-families';

interface Row {
  app: number;
  value: number | bigint | null;
}

const HELP = 'IDs left (a help with a \\ backslash,\nand a newline)';

function rowsOf(n: number): Row[] {
  const special: Array<number | bigint | null> = [0, -1, 1.5, 2 ** 53, 2n ** 55n + 3n, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, null];
  return Array.from({ length: n }, (_, i) => ({ app: i, value: i < special.length ? special[i] : (i * 7919) % 100_003 }));
}

/** prom-client's text for the same gauge, as the service wrote it before (Gauge.set with Number(v)). */
async function promClientText(name: string, rows: readonly Row[]): Promise<string> {
  const register = new Registry();
  const gauge = new Gauge({ name, help: HELP, labelNames: ['app'], registers: [register] });
  for (const r of rows) {
    if (r.value !== null) {
      gauge.set({ app: r.app }, Number(r.value));
    }
  }
  return register.getSingleMetricAsString(name);
}

describe('AppFamiliesText: per-app gauges written as text', () => {
  it.each([0, 1, 9, 256])('%d rows: the same text as a prom-client gauge with the label app', async (n) => {
    // Fails when prom-client's exposition changes underneath (escaping, values, layout).
    const rows = rowsOf(n);
    const text = new AppFamiliesText<Row>([{ name: 'test_remaining', help: HELP, shared: true, value: (r) => r.value }]);
    expect(text.render(rows, true)).toBe(await promClientText('test_remaining', rows));
  });

  it("writes a shared family's series on the leader only (its HELP and TYPE everywhere); families apart by a blank line", async () => {
    const rows = rowsOf(12);
    const text = new AppFamiliesText<Row>([
      { name: 'a_shared', help: HELP, shared: true, value: (r) => r.value },
      { name: 'b_own', help: HELP, shared: false, value: (r) => r.value },
    ]);
    const [a, b] = [await promClientText('a_shared', rows), await promClientText('b_own', rows)];
    expect(text.render(rows, true)).toBe(`${a}\n\n${b}`);
    expect(text.render(rows, false)).toBe(`${await promClientText('a_shared', [])}\n\n${b}`);
  });

  it('writes the text once per set of rows and leadership', () => {
    let calls = 0;
    const text = new AppFamiliesText<Row>([
      {
        name: 'x',
        help: 'x',
        shared: true,
        value: (r) => {
          calls++;
          return r.value;
        },
      },
    ]);
    const rows = rowsOf(3);
    const first = text.render(rows, true);
    expect(text.render(rows, true)).toBe(first);
    expect(calls).toBe(3);
    text.render(rows, false);
    text.render(rows, true);
    expect(calls).toBe(6);
    text.render(rowsOf(3), true);
    expect(calls).toBe(9);
  });
});
