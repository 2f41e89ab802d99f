import { ErrorKind, IdGenError } from '../../src/common/id-gen.error';

/** The error kind a synchronous call throws, or undefined when it returns. */
export function errorKindOfCall(run: () => void): ErrorKind | undefined {
  try {
    run();
    return undefined;
  } catch (err) {
    return (err as IdGenError).kind;
  }
}

/** The error kind a promise rejects with (fails when it resolves or throws something else). */
export async function errorKindOf(promise: Promise<unknown>): Promise<ErrorKind> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof IdGenError) {
      return err.kind;
    }
    throw err;
  }
  throw new Error('expected an IdGenError');
}
