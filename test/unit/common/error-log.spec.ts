import { Logger } from '@nestjs/common';
import { ErrorLogShutdown } from '../../../src/common/error-log';
import { toErrorResponse } from '../../../src/common/error.filter';
import { ErrorKind, IdGenError } from '../../../src/common/id-gen.error';
import { PinoNestLogger, createRootLogger } from '../../../src/logging/pino-logger';

/** The JSON lines the service would write, through the same Nest logger over pino. */
function captureLogs() {
  const lines: Array<Record<string, unknown>> = [];
  Logger.overrideLogger(new PinoNestLogger(createRootLogger('log', { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) })));
  return lines;
}

function refused(port: number): Error {
  return Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${port}`), { code: 'ECONNREFUSED' });
}

describe('error log lines of failed requests', () => {
  let lines: Array<Record<string, unknown>>;
  beforeEach(() => {
    lines = captureLogs();
  });
  afterEach(() => {
    new ErrorLogShutdown().onApplicationShutdown();
    Logger.overrideLogger(false);
  });

  it('writes a backend failure once with the first request id, counts the rest and writes the count at shutdown', () => {
    for (let i = 1; i <= 500; i++) {
      expect(toErrorResponse(refused(6379), `req-${i}`).status).toBe(503);
    }
    expect(lines).toEqual([
      expect.objectContaining({ level: 'warn', context: 'ErrorFilter', msg: 'backend failure: connect ECONNREFUSED 127.0.0.1:6379', reqId: 'req-1' }),
    ]);
    // Another text is a line of its own.
    toErrorResponse(refused(3306), 'req-501');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ msg: 'backend failure: connect ECONNREFUSED 127.0.0.1:3306', reqId: 'req-501' });
    new ErrorLogShutdown().onApplicationShutdown();
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ level: 'warn', msg: 'backend failure: connect ECONNREFUSED 127.0.0.1:6379', repeated: 499 });
    expect(lines[2].reqId).toBeUndefined();
    expect(typeof lines[2].sinceMs).toBe('number');
  });

  it("writes a service's own 503 with the backend error under it, with the request id, once per text", () => {
    // As QueueIdService maps a failed pop: its own message to the client, the cause in the log.
    const mapped = (reqId: string) =>
      toErrorResponse(new IdGenError(ErrorKind.BackendUnavailable, 'a backend (Redis or MySQL) is unavailable; retry later', { cause: refused(6380) }), reqId);
    const first = mapped('req-7');
    expect(first.status).toBe(503);
    expect(first.body.message).toBe('a backend (Redis or MySQL) is unavailable; retry later');
    mapped('req-8');
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', msg: 'backend failure: connect ECONNREFUSED 127.0.0.1:6380', reqId: 'req-7' })]);
    // Without a cause (a timeout the service words itself) nothing is logged here.
    toErrorResponse(new IdGenError(ErrorKind.BackendUnavailable, 'MySQL did not answer within 2000 ms'), 'req-9');
    expect(lines).toHaveLength(1);
    // A promise rejected with undefined underneath is still a line.
    toErrorResponse(new IdGenError(ErrorKind.BackendUnavailable, 'a backend (Redis or MySQL) is unavailable; retry later', { cause: undefined }), 'req-10');
    expect(lines[1]).toMatchObject({ msg: 'backend failure: undefined', reqId: 'req-10' });
  });

  it('writes an unexpected error once with its stack and request id, and counts the rest', () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'shards')");
    for (let i = 1; i <= 50; i++) {
      expect(toErrorResponse(bug, `req-${i}`).status).toBe(500);
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'error', reqId: 'req-1' });
    expect(lines[0].msg).toBe(bug.stack);
    expect(String(lines[0].msg)).toMatch(/at .*error-log\.spec\.ts/);
    new ErrorLogShutdown().onApplicationShutdown();
    expect(lines[1]).toMatchObject({ level: 'error', msg: bug.stack, repeated: 49 });
  });
});
