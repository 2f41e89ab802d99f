import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { LuaScript } from '../../../src/infra/redis/lua-script';
import { BATCHED_WRITES } from '../../../src/infra/redis/redis-client.factory';
import { TEST_REDIS_URL, deleteByPrefix } from '../../support/test-env';

/** A script no server has seen yet (a unique comment): its first EVALSHA is answered NOSCRIPT. */
function unseen(body: string, numberOfKeys: number): LuaScript {
  return new LuaScript(`-- ${randomUUID()}\n${body}`, numberOfKeys);
}

describe('LuaScript (EVALSHA, EVAL once on NOSCRIPT)', () => {
  // The service's options: auto-pipelining on, so scripts share a turn's pipeline with plain commands.
  const redis = new Redis(TEST_REDIS_URL, BATCHED_WRITES);
  const prefix = `test.${randomUUID()}.lua.`;

  afterAll(async () => {
    await deleteByPrefix(redis, prefix);
    await redis.quit();
  });

  it('runs a script the server does not know exactly once (NOSCRIPT did not run it), then by its sha', async () => {
    const script = unseen("return redis.call('INCR', KEYS[1])", 1);
    const key = `${prefix}runs`;
    expect(await redis.script('EXISTS', script.sha)).toEqual([0]);
    expect(await script.run(redis, key)).toBe(1);
    expect(await redis.script('EXISTS', script.sha)).toEqual([1]);
    expect(await script.run(redis, key)).toBe(2);
    expect(await redis.get(key)).toBe('2');
  });

  it('does not send a script again that failed for another reason (it may have run)', async () => {
    const script = unseen("redis.call('INCR', KEYS[1]); return redis.call('LPOP', KEYS[2])", 2);
    const counter = `${prefix}tries`;
    const notAList = `${prefix}string`;
    await redis.set(notAList, 'x');
    await expect(script.run(redis, counter, notAList)).rejects.toThrow(/WRONGTYPE/);
    expect(await redis.get(counter)).toBe('1');
  });

  it('gives Buffers with runBuffer and strings with run, in the same turn as plain commands', async () => {
    const script = unseen("return {redis.call('LPOP', KEYS[1]), redis.call('LLEN', KEYS[1])}", 1);
    const list = `${prefix}list`;
    await redis.rpush(list, '7', '8', '9');
    // One turn: a plain pop opens the auto-pipeline, both script runs join it.
    const [plain, asBuffers, asStrings] = await Promise.all([redis.lpop(list), script.runBuffer(redis, list), script.run(redis, list)]);
    expect(plain).toBe('7');
    const [entry, length] = asBuffers as [Buffer, number];
    expect(Buffer.isBuffer(entry)).toBe(true);
    expect(entry.toString()).toBe('8');
    expect(length).toBe(1);
    expect(asStrings).toEqual(['9', 0]);
  });
});
