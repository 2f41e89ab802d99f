/** The JSON data of a worker-id node: Leaf's `{"ip","port","timestamp"}` (+ owner in zk_recycle). */
export interface ZkNodeData {
  ip: string;
  port: string;
  timestamp: number;
  /** zk_recycle: a random token of the holder, to recognise its own node after a lost reply. */
  owner?: string;
}

export function encodeNodeData(data: ZkNodeData): Buffer {
  return Buffer.from(JSON.stringify(data), 'utf8');
}

/** Parses node data; a node with unreadable data counts as timestamp 0 (never ahead of a clock). */
export function decodeNodeData(buffer: Buffer): ZkNodeData {
  try {
    const parsed = JSON.parse(buffer.toString('utf8')) as Partial<ZkNodeData>;
    return {
      ip: typeof parsed.ip === 'string' ? parsed.ip : '',
      port: parsed.port === undefined ? '' : String(parsed.port),
      timestamp: typeof parsed.timestamp === 'number' && Number.isSafeInteger(parsed.timestamp) ? parsed.timestamp : 0,
      owner: typeof parsed.owner === 'string' ? parsed.owner : undefined,
    };
  } catch {
    return { ip: '', port: '', timestamp: 0 };
  }
}
