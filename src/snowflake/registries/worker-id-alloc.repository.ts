import { DataSource } from 'typeorm';

export interface WorkerIdAllocRow {
  id: number;
  ipPort: string;
  ip: string;
  port: string;
  maxTimestamp: number | null;
}

interface RawRow {
  id: number | string;
  ip_port: string;
  ip: string;
  port: string;
  max_timestamp: string | number | null;
}

/** Narrow data access to `leaf_workerid_alloc` (mysql mode). */
export class WorkerIdAllocRepository {
  constructor(private readonly dataSource: DataSource) {}

  async findByIpPort(ipPort: string): Promise<WorkerIdAllocRow | null> {
    const rows: RawRow[] = await this.dataSource.query(
      'SELECT id, ip_port, ip, port, max_timestamp FROM leaf_workerid_alloc WHERE ip_port = ?',
      [ipPort],
    );
    return rows.length > 0 ? toRow(rows[0]) : null;
  }

  /** Inserts this instance's row; resolves null when another instance inserted it first. */
  async insert(ip: string, port: number, maxTimestamp: number): Promise<number | null> {
    try {
      const result: { insertId: number } = await this.dataSource.query(
        'INSERT INTO leaf_workerid_alloc (ip_port, ip, port, max_timestamp) VALUES (?, ?, ?, ?)',
        [`${ip}:${port}`, ip, String(port), maxTimestamp],
      );
      return Number(result.insertId);
    } catch (err) {
      const code = (err as { driverError?: { code?: string }; code?: string }).driverError?.code ?? (err as { code?: string }).code;
      if (code === 'ER_DUP_ENTRY') {
        return null;
      }
      throw err;
    }
  }

  /** Records a reported time; the stored value never decreases. */
  async reportTimestamp(id: number, timestamp: number): Promise<void> {
    await this.dataSource.query(
      'UPDATE leaf_workerid_alloc SET max_timestamp = GREATEST(COALESCE(max_timestamp, 0), ?) WHERE id = ?',
      [timestamp, id],
    );
  }

  /** Other rows reported since `since`, most recent first. */
  async recentOthers(id: number, since: number, limit: number): Promise<WorkerIdAllocRow[]> {
    const rows: RawRow[] = await this.dataSource.query(
      `SELECT id, ip_port, ip, port, max_timestamp FROM leaf_workerid_alloc
        WHERE id <> ? AND max_timestamp >= ? ORDER BY max_timestamp DESC LIMIT ${Number(limit)}`,
      [id, since],
    );
    return rows.map(toRow);
  }
}

function toRow(raw: RawRow): WorkerIdAllocRow {
  return {
    id: Number(raw.id),
    ipPort: raw.ip_port,
    ip: raw.ip,
    port: raw.port,
    maxTimestamp: raw.max_timestamp === null ? null : Number(raw.max_timestamp),
  };
}
