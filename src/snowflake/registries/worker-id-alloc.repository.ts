import { DataSource } from 'typeorm';

export interface WorkerIdAllocRow {
  id: number;
  ipPort: string;
  ip: string;
  port: string;
  maxTimestamp: number | null;
}

/** Who holds a row: its owner token and how long ago (database clock) it last reported. */
export interface WorkerIdHolder {
  owner: string | null;
  /** The raw last_report value: a change means the holder reported again. */
  lastReport: string | null;
  /** Milliseconds since the last report by the database's clock (null: never reported). */
  agoMs: number | null;
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

  /**
   * Inserts this instance's row, owned by `owner` (no time recorded yet); resolves null when
   * another instance inserted it first.
   */
  async insert(ip: string, port: number, owner: string): Promise<number | null> {
    try {
      const result: { insertId: number } = await this.dataSource.query(
        'INSERT INTO leaf_workerid_alloc (ip_port, ip, port, max_timestamp, owner, last_report) VALUES (?, ?, ?, NULL, ?, NOW(3))',
        [`${ip}:${port}`, ip, String(port), owner],
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

  /**
   * Takes the row for `owner` when it is free (no owner, a graceful stop), already ours, or its
   * holder has not reported for `livenessMs` by the database's clock. Resolves whether it did.
   */
  async claim(id: number, owner: string, livenessMs: number): Promise<boolean> {
    const result: { affectedRows: number } = await this.dataSource.query(
      `UPDATE leaf_workerid_alloc SET owner = ?, last_report = NOW(3)
        WHERE id = ? AND (owner IS NULL OR owner = ? OR last_report IS NULL OR last_report < NOW(3) - INTERVAL ? MICROSECOND)`,
      [owner, id, owner, livenessMs * 1000],
    );
    return Number(result.affectedRows) > 0;
  }

  async holder(id: number): Promise<WorkerIdHolder | null> {
    const rows: Array<{ owner: string | null; last_report: string | null; ago_ms: string | number | null; max_timestamp: string | number | null }> =
      await this.dataSource.query(
        `SELECT owner, CAST(last_report AS CHAR) AS last_report, TIMESTAMPDIFF(MICROSECOND, last_report, NOW(3)) DIV 1000 AS ago_ms, max_timestamp
           FROM leaf_workerid_alloc WHERE id = ?`,
        [id],
      );
    if (rows.length === 0) {
      return null;
    }
    const r = rows[0];
    return {
      owner: r.owner,
      lastReport: r.last_report,
      agoMs: r.ago_ms === null ? null : Number(r.ago_ms),
      maxTimestamp: r.max_timestamp === null ? null : Number(r.max_timestamp),
    };
  }

  /**
   * Records `until` (never lowering the stored time) while the row is still owned by `owner`;
   * resolves false when it is not (the ownership was lost: stop issuing).
   */
  async report(id: number, owner: string, until: number): Promise<boolean> {
    const result: { affectedRows: number } = await this.dataSource.query(
      `UPDATE leaf_workerid_alloc SET max_timestamp = GREATEST(COALESCE(max_timestamp, 0), ?), last_report = NOW(3)
        WHERE id = ? AND owner = ?`,
      [until, id, owner],
    );
    return Number(result.affectedRows) > 0;
  }

  /** Graceful stop: records the last ID's time exactly and frees the row (if still ours). */
  async release(id: number, owner: string, maxTimestamp: number): Promise<void> {
    await this.dataSource.query('UPDATE leaf_workerid_alloc SET max_timestamp = ?, owner = NULL WHERE id = ? AND owner = ?', [
      maxTimestamp,
      id,
      owner,
    ]);
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
