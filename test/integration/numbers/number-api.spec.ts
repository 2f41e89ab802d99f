import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { errorSpec } from '../../../src/common/error-catalog';
import { ErrorKind } from '../../../src/common/id-gen.error';
import { CLOCK_VIEW, numberClockSql } from '../../../src/numbers/number-clock-sql';
import { appSuite } from '../../support/app-suite';
import { pollUntil } from '../../support/poll';
import { expectError, request } from '../../support/test-env';

const EXHAUSTED = errorSpec(ErrorKind.NumberExhausted);
const NOT_FOUND = errorSpec(ErrorKind.NumberFormatNotFound);

describe('formatted numbers: route and admin API', () => {
  const suite = appSuite('numbers');
  let app: NestFastifyApplication;

  const create = (body: Record<string, unknown>) => request(app, 'POST', '/admin/numbers', { body });
  const one = (key: string) => request(app, 'GET', `/api/number/${key}`, { token: null });
  const many = (key: string, n: number) => request(app, 'GET', `/api/number/${key}?count=${n}`, { token: null });

  /** The database's day as the service reads it: the same expression, on the same view, in NUMBER_TIME_ZONE (default). */
  async function dbDay(): Promise<string> {
    const rows = (await suite.env.sql(`SELECT ${numberClockSql('+00:00')} AS t FROM ${CLOCK_VIEW} c`)) as Array<{ t: string }>;
    return rows[0].t.slice(0, 10).replace(/-/g, '');
  }

  beforeAll(async () => {
    app = await suite.start({ SNOWFLAKE_MODE: 'off' });
  });

  it('ORD{yyyyMMdd}{seq:6}, daily: the first two numbers of the day are ORD<date>000001 and ORD<date>000002, the date from the database', async () => {
    const res = await create({ key: 'ord', pattern: 'ORD{yyyyMMdd}{seq:6}', reset: 'daily' });
    expect(res.status).toBe(201);
    const before = await dbDay();
    const first = await one('ord');
    const second = await one('ord');
    const after = await dbDay();
    expect(first.status).toBe(200);
    expect(first.contentType).toContain('text/plain');
    expect([`ORD${before}000001`, `ORD${after}000001`]).toContain(first.body);
    expect(second.body).toBe(`${first.body.slice(0, 11)}000002`);
    const batch = await many('ord', 3);
    expect(batch.contentType).toContain('application/json');
    expect(batch.json()).toEqual({ numbers: [3, 4, 5].map((n) => `${first.body.slice(0, 11)}00000${n}`) });
  });

  it('{seq:2}: 99 numbers, then 410 NUMBER_EXHAUSTED, never a longer number and never a wrap', async () => {
    expect((await create({ key: 'two', pattern: 'T{seq:2}', step: 10 })).status).toBe(201);
    const got = [...(await many('two', 50)).json<{ numbers: string[] }>().numbers];
    for (let i = 0; i < 49; i++) {
      got.push((await one('two')).body);
    }
    expect(got).toEqual(Array.from({ length: 99 }, (_, i) => `T${String(i + 1).padStart(2, '0')}`));
    expectError(await one('two'), EXHAUSTED.status, EXHAUSTED.code);
    expectError(await many('two', 5), EXHAUSTED.status, EXHAUSTED.code);
    const detail = await request(app, 'GET', '/admin/numbers/two');
    expect(detail.json()).toMatchObject({ capacity: '99', latest: { period: '', maxSeq: '99', left: '0' } });
  });

  it('a batch that crosses the capacity gets the error, and the numbers it took are not issued again', async () => {
    expect((await create({ key: 'three', pattern: 'X{seq:1}' })).status).toBe(201);
    expect((await many('three', 5)).json()).toEqual({ numbers: ['X1', 'X2', 'X3', 'X4', 'X5'] });
    expectError(await many('three', 5), EXHAUSTED.status, EXHAUSTED.code);
    expectError(await one('three'), EXHAUSTED.status, EXHAUSTED.code);
  });

  it('base-62 sequences and every date part', async () => {
    expect((await create({ key: 'b62', pattern: 'B-{yy}{MM}{dd}{HH}-{seq62:3}', reset: 'daily' })).status).toBe(201);
    const numbers = (await many('b62', 70)).json<{ numbers: string[] }>().numbers;
    expect(numbers[0]).toMatch(/^B-\d{8}-001$/);
    expect(numbers[60].slice(-3)).toBe('00z');
    expect(numbers[61].slice(-3)).toBe('010');
  });

  it('{seq:06} is stored as {seq:6} (the same format), {seq36:N} prints upper-case base 36', async () => {
    const res = await create({ key: 'lead0', pattern: 'L{seq:06}' });
    expect(res.status).toBe(201);
    expect(res.json()).toMatchObject({ pattern: 'L{seq:6}', capacity: '999999' });
    expect((await create({ key: 'lead0', pattern: 'L{seq:6}' })).status).toBe(200);
    expect((await create({ key: 'b36', pattern: 'H{seq36:2}', step: 1 })).status).toBe(201);
    const numbers = (await many('b36', 37)).json<{ numbers: string[] }>().numbers;
    expect([numbers[0], numbers[34], numbers[35], numbers[36]]).toEqual(['H01', 'H0Z', 'H10', 'H11']);
  });

  it('admin: create is idempotent, list and get show the latest period, PATCH changes the step only', async () => {
    const body = { key: 'inv', pattern: 'INV{yyyyMM}-{seq:5}', reset: 'monthly', step: 7, description: 'invoices' };
    expect((await create(body)).status).toBe(201);
    const again = await create(body);
    expect(again.status).toBe(200);
    expect(again.json()).toMatchObject({ key: 'inv', pattern: body.pattern, reset: 'monthly', step: 7, capacity: '99999', length: 15 });
    expectError(await create({ ...body, step: 8 }), 409);
    expectError(await create({ ...body, pattern: 'INV{yyyyMM}-{seq:6}' }), 409);
    expect((await one('inv')).status).toBe(200);
    const list = (await request(app, 'GET', '/admin/numbers')).json<{ formats: Array<{ key: string }> }>();
    expect(list.formats.map((f) => f.key)).toEqual(expect.arrayContaining(['inv', 'ord', 'two']));
    // The number took 1 of the segment 1..7 (more than 10 %): the request started the preload of
    // 8..14 in the background before it answered. Once this instance's view shows no allocation in
    // flight, the preload's transaction has committed, and the next read shows both segments.
    await pollUntil('the preload of inv to settle', async () => {
      const view = (await request(app, 'GET', '/admin/numbers/inv')).json<{ buffer: { loading: boolean } }>();
      return !view.buffer.loading;
    });
    const detail = (await request(app, 'GET', '/admin/numbers/inv')).json<Record<string, unknown>>();
    expect(detail).toMatchObject({
      latest: { maxSeq: '14', left: '99985' },
      buffer: { key: 'inv', loading: false, current: { next: '2', max: '7' }, next: { next: '8', max: '14' } },
    });
    expect((detail.periods as unknown[]).length).toBe(1);
    const patched = await request(app, 'PATCH', '/admin/numbers/inv', { body: { step: 50, description: null } });
    expect(patched.status).toBe(200);
    expect(patched.json()).toMatchObject({ step: 50, description: null });
    expectError(await request(app, 'PATCH', '/admin/numbers/inv', { body: { pattern: 'X{seq:3}' } }), 400);
    expectError(await request(app, 'PATCH', '/admin/numbers/inv', { body: { reset: 'daily' } }), 400);
    expectError(await request(app, 'PATCH', '/admin/numbers/inv', { body: {} }), 400);
    expectError(await request(app, 'PATCH', '/admin/numbers/nope', { body: { step: 5 } }), 404);
  });

  it('delete + re-create never issues a number again; a re-create with another pattern is refused', async () => {
    expect((await create({ key: 'del', pattern: 'D{seq:4}', step: 3 })).status).toBe(201);
    const before = (await many('del', 5)).json<{ numbers: string[] }>().numbers;
    expect(before).toEqual(['D0001', 'D0002', 'D0003', 'D0004', 'D0005']);
    expect((await request(app, 'DELETE', '/admin/numbers/del')).json()).toEqual({ key: 'del', deleted: true });
    expectError(await one('del'), NOT_FOUND.status, NOT_FOUND.code);
    expect(expectError(await request(app, 'DELETE', '/admin/numbers/del'), 404).message).toMatch(/was deleted/);
    expectError(await create({ key: 'del', pattern: 'D{seq:5}' }), 409);
    expectError(await create({ key: 'del', pattern: 'D{seq:4}', reset: 'yearly' }), 400);
    expect((await create({ key: 'del', pattern: 'D{seq:4}', step: 3 })).status).toBe(201);
    // The sequence continues above everything allocated before the delete (1..5, and 6..8 if preloaded).
    const next = await one('del');
    expect(next.status).toBe(200);
    expect(['D0006', 'D0009']).toContain(next.body);
  });

  it('a pattern that can print what a live or deleted format of another key prints: 409 NUMBER_TEXT_OVERLAP, unless allowTextOverlap', async () => {
    const OVERLAP = errorSpec(ErrorKind.NumberTextOverlap);
    expect(OVERLAP).toEqual({ code: -302, status: 409 });
    expect((await create({ key: 'tix', pattern: 'TIX{yyyyMMdd}{seq:4}', reset: 'daily' })).status).toBe(201);
    const first = (await one('tix')).body;
    // Live: the same pattern, or one whose every position can hold the same character.
    expect(expectError(await create({ key: 'tix2', pattern: 'TIX{yyyyMMdd}{seq:4}', reset: 'daily' }), 409, -302).message).toMatch(/'tix'/);
    expectError(await create({ key: 'tix3', pattern: 'TIX{seq:12}' }), 409, -302);
    expect((await create({ key: 'tix4', pattern: 'TIX-{seq:11}' })).status).toBe(201);
    // Deleted: "delete ord, create ord2 with the same pattern" would print ORD…000001 again.
    expect((await request(app, 'DELETE', '/admin/numbers/tix')).status).toBe(200);
    const refused = expectError(await create({ key: 'tix5', pattern: 'TIX{yyyyMMdd}{seq:4}', reset: 'daily' }), 409, -302);
    expect(refused.message).toMatch(/'tix' \(deleted at/);
    expectError(await one('tix5'), NOT_FOUND.status, NOT_FOUND.code);
    // The opt-in: created, and (its own sequence) it prints the first number again.
    const allowed = await create({ key: 'tix5', pattern: 'TIX{yyyyMMdd}{seq:4}', reset: 'daily', allowTextOverlap: true });
    expect(allowed.status).toBe(201);
    expect((await one('tix5')).body).toBe(first);
    // Creating it again (idempotent) needs no opt-in; a bad opt-in is bad input.
    expect((await create({ key: 'tix5', pattern: 'TIX{yyyyMMdd}{seq:4}', reset: 'daily' })).status).toBe(200);
    expectError(await create({ key: 'tix6', pattern: 'Z{seq:2}', allowTextOverlap: 'yes' }), 400, -100);
  });

  it('concurrent creates of overlapping patterns under different keys: exactly one gets in', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => create({ key: `race${i}`, pattern: 'RACE{seq:5}' })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });

  it('unknown keys answer 404 NUMBER_FORMAT_NOT_FOUND; bad input answers 400 with {code, message}', async () => {
    expectError(await one('missing'), NOT_FOUND.status, NOT_FOUND.code);
    for (const url of ['/api/number/a%20b', '/api/number/-x', `/api/number/${'k'.repeat(65)}`, '/api/number/ord?count=0', '/api/number/ord?count=1001', '/api/number/ord?count=x']) {
      expectError(await request(app, 'GET', url, { token: null }), 400, -100);
    }
    const bad: Array<Record<string, unknown>> = [
      {},
      { key: 'x' },
      { key: 'x', pattern: 'X' },
      { key: 'x', pattern: '{seq:2}', reset: 'daily' },
      { key: 'x', pattern: '{yyyyMMdd}{seq:2}', reset: 'hourly' },
      { key: 'x', pattern: 'A B{seq:2}' },
      { key: 'x', pattern: '{seq:19}' },
      { key: 'x', pattern: '{seq:2}', step: 0 },
      { key: 'x', pattern: '{seq:2}', step: 100_001 },
      { key: 'x', pattern: '{seq:2}', extra: 1 },
      { key: '', pattern: '{seq:2}' },
      { key: 'a/b', pattern: '{seq:2}' },
    ];
    for (const body of bad) {
      expectError(await create(body), 400, -100);
    }
    expectError(await request(app, 'POST', '/admin/numbers', { body: { key: 'x', pattern: '{seq:2}' }, token: 'wrong-token-x' }), 401);
    expectError(await request(app, 'GET', '/admin/numbers', { token: null }), 401);
    expectError(await request(app, 'GET', '/admin/numbers/a%20b'), 400);
  });
});
