import { errorSpec } from '../../../src/common/error-catalog';
import { toErrorResponse } from '../../../src/common/error.filter';
import { ErrorKind, IdGenError } from '../../../src/common/id-gen.error';

describe('error catalog', () => {
  it('keeps the seed codes -1..-4 for queue IDs', () => {
    expect(errorSpec(ErrorKind.QueueNotInitialised)).toEqual({ code: -1, status: 503 });
    expect(errorSpec(ErrorKind.QueueAppNotFound)).toEqual({ code: -2, status: 404 });
    expect(errorSpec(ErrorKind.QueueShardNotFound)).toEqual({ code: -3, status: 404 });
    expect(errorSpec(ErrorKind.QueueEmpty)).toEqual({ code: -4, status: 503 });
    expect(errorSpec(ErrorKind.QueueExhausted)).toEqual({ code: -5, status: 410 });
  });

  it('maps every kind to a 4xx/5xx status', () => {
    for (const kind of Object.values(ErrorKind)) {
      const { status } = errorSpec(kind);
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(600);
    }
  });

  it('turns a backend connection failure into a 503, an unknown error into a 500', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED' });
    expect(toErrorResponse(refused).status).toBe(503);
    expect(toErrorResponse(new TypeError('bug')).status).toBe(500);
    expect(toErrorResponse(new IdGenError(ErrorKind.BadInput, 'x')).body).toEqual({
      code: -100,
      error: 'BAD_INPUT',
      message: 'x',
    });
  });
});
