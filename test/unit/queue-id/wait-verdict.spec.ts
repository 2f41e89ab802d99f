import { waitVerdict } from '../../../src/queue-id/core/wait-verdict';

describe('waitVerdict (REDIS_WAIT_REPLICAS)', () => {
  const ok = { error: null, acks: 1, epochBefore: 3, epochAfter: 3 };

  it('confirms when enough replicas acknowledged on an unchanged connection', () => {
    expect(waitVerdict(ok, 1, 200)).toEqual({ confirmed: true });
    expect(waitVerdict({ ...ok, acks: 2 }, 1, 200)).toEqual({ confirmed: true });
  });

  it('confirms nothing when the connection was lost between the pop and the WAIT reply', () => {
    // Even a WAIT that reports enough replicas: it may have measured another server.
    const verdict = waitVerdict({ ...ok, acks: 5, epochAfter: 4 }, 1, 200);
    expect(verdict).toEqual({ confirmed: false, reason: expect.stringContaining('connection changed') });
  });

  it('confirms nothing when the WAIT failed', () => {
    const verdict = waitVerdict({ ...ok, error: new Error('connection lost') }, 1, 200);
    expect(verdict).toEqual({ confirmed: false, reason: 'WAIT failed (connection lost)' });
  });

  it('confirms nothing with too few acknowledgements', () => {
    expect(waitVerdict({ ...ok, acks: 1 }, 2, 50)).toEqual({
      confirmed: false,
      reason: 'only 1 of 2 Redis replicas confirmed the pop in 50 ms',
    });
  });
});
