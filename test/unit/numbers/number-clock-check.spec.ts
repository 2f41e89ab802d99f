import { Logger } from '@nestjs/common';
import { loadConfig } from '../../../src/config/load-config';
import { NumberClockCheck } from '../../../src/numbers/number-clock-check';
import { NumberSequenceRepository } from '../../../src/numbers/number-sequence.repository';

describe('NumberClockCheck (the start check of the database clock view)', () => {
  let log: jest.SpyInstance;
  let warn: jest.SpyInstance;

  beforeEach(() => {
    log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  afterEach(() => jest.restoreAllMocks());

  const run = async (env: Record<string, string>, check: () => Promise<unknown>): Promise<string[]> => {
    const repo = { checkClock: check } as unknown as NumberSequenceRepository;
    await new NumberClockCheck(repo, loadConfig(env).numbers).onApplicationBootstrap();
    return [...log.mock.calls, ...warn.mock.calls].map((c) => String(c[0]));
  };

  it('quiet when the database runs in NUMBER_TIME_ZONE', async () => {
    expect(await run({}, async () => ({ dbNow: '2026-11-26 09:00:00.000000', viewMinusUtcS: 0, nowOffsetMin: 0 }))).toEqual([]);
    expect(
      await run({ NUMBER_TIME_ZONE: '-05:30' }, async () => ({ dbNow: '2026-11-26 09:00:00.000000', viewMinusUtcS: 0, nowOffsetMin: -330 })),
    ).toEqual([]);
  });

  it("names the offset of the database's NOW() when it differs from NUMBER_TIME_ZONE", async () => {
    const lines = await run({}, async () => ({ dbNow: '2026-11-26 09:00:00.000000', viewMinusUtcS: 0, nowOffsetMin: 480 }));
    expect(lines).toEqual([expect.stringContaining('set NUMBER_TIME_ZONE=+08:00')]);
  });

  it('a view that cannot be read: one line naming it; the start goes on', async () => {
    const lines = await run({}, async () => Promise.reject(new Error("Table 'x.shardleaf_db_clock' doesn't exist")));
    expect(lines).toEqual([expect.stringMatching(/shardleaf_db_clock.*answer 503/)]);
  });
});
