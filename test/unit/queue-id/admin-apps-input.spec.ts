import { minMaxLimitId, parseCreateApp, parsePatchApp } from '../../../src/queue-id/admin/admin-apps.input';
import { ErrorKind, IdGenError } from '../../../src/common/id-gen.error';
import { composeQueueId, maxIndexFor } from '../../../src/queue-id/core/queue-id-layout';

function refusal(fn: () => unknown): IdGenError {
  try {
    fn();
  } catch (err) {
    if (err instanceof IdGenError) {
      return err;
    }
    throw err;
  }
  throw new Error('not refused');
}

describe('maxLimitId of POST/PATCH /admin/apps ("Never twice", item 10)', () => {
  it('the minimum is index 1 on shard 63: (1 << 14) | (63 << 8) | appId', () => {
    expect(minMaxLimitId(0)).toBe(32512n);
    expect(minMaxLimitId(7)).toBe((1n << 14n) | (63n << 8n) | 7n);
    expect(minMaxLimitId(255)).toBe(composeQueueId(1n, 63, 255));
    // At the minimum every shard has index 1; one below, shard 63 has none.
    for (const appId of [0, 7, 255]) {
      for (let shard = 0; shard < 64; shard++) {
        expect(maxIndexFor(appId, shard, minMaxLimitId(appId))).toBeGreaterThanOrEqual(1n);
      }
      expect(maxIndexFor(appId, 63, minMaxLimitId(appId) - 1n)).toBe(0n);
    }
  });

  it.each([1n, 100n, 16384n, 32518n])('refuses %s for appId 7 on create and on patch, naming the minimum', (value) => {
    for (const raw of [value.toString(), Number(value)]) {
      const created = refusal(() => parseCreateApp({ appId: 7, appName: 'x', maxLimitId: raw }, 1000));
      expect(created.kind).toBe(ErrorKind.BadInput);
      expect(created.message).toContain('32519');
      const patched = refusal(() => parsePatchApp({ maxLimitId: raw }, 1000, 7));
      expect(patched.kind).toBe(ErrorKind.BadInput);
      expect(patched.message).toContain('32519');
    }
  });

  it('accepts 0 (no limit), the minimum and anything above', () => {
    for (const value of [0n, 32519n, 32520n, (1n << 63n) - 1n]) {
      expect(parseCreateApp({ appId: 7, appName: 'x', maxLimitId: value.toString() }, 1000).maxLimitId).toBe(value);
      expect(parsePatchApp({ maxLimitId: value.toString() }, 1000, 7).maxLimitId).toBe(value);
    }
    expect(parseCreateApp({ appId: 7, appName: 'x' }, 1000).maxLimitId).toBe(0n);
  });

  it('the minimum depends on the appId of the path for a patch', () => {
    expect(parsePatchApp({ maxLimitId: '32512' }, 1000, 0).maxLimitId).toBe(32512n);
    expect(refusal(() => parsePatchApp({ maxLimitId: '32512' }, 1000, 1)).message).toContain('32513');
  });
});
