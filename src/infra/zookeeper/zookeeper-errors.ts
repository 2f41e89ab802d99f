import { Exception } from 'node-zookeeper-client';

/** Raised when ZooKeeper cannot be reached (not connected, connect timeout, connection lost). */
export class ZookeeperUnavailableError extends Error {
  readonly code = 'ECONNREFUSED';

  constructor(message: string) {
    super(message);
    this.name = 'ZookeeperUnavailableError';
  }
}

function codeOf(err: unknown): number | undefined {
  if (err instanceof Exception) {
    return err.getCode();
  }
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export const isNoNode = (err: unknown): boolean => codeOf(err) === Exception.NO_NODE;
export const isNodeExists = (err: unknown): boolean => codeOf(err) === Exception.NODE_EXISTS;
export const isBadVersion = (err: unknown): boolean => codeOf(err) === Exception.BAD_VERSION;

/** A conflict of a conditional write or multi: someone else changed the node first. */
export function isConflict(err: unknown): boolean {
  return isNoNode(err) || isNodeExists(err) || isBadVersion(err);
}

/** Connection-level failures, as opposed to a refused operation. */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof ZookeeperUnavailableError) {
    return true;
  }
  const code = codeOf(err);
  return (
    code === Exception.CONNECTION_LOSS || code === Exception.SESSION_EXPIRED || code === Exception.OPERATION_TIMEOUT
  );
}
