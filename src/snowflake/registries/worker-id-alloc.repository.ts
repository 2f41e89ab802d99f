import { DataSource } from 'typeorm';
import { withTimeout } from '../../common/with-timeout';

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
  /** The row's ip:port now (a takeover changes it). */
  ipPort: string;
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

/**
 * A row whose instance is gone: a row shardleaf has claimed (last_report set) when freed by a
 * graceful stop (owner NULL) or not reported (database clock) for the grace period. A row
 * shardleaf never claimed (last_report NULL: a Leaf fork instance sharing the table, which reports
 * only max_timestamp, by its own clock) is never taken automatically: its instance may be alive.
 * Param: graceMs × 1000 (µs).
 */
const DEPARTED = `(last_report IS NOT NULL AND (owner IS NULL OR last_report < NOW(3) - INTERVAL ? MICROSECOND))`;

/**
 * Narrow data access to `leaf_workerid_alloc` (mysql mode). Every call is bounded by `timeoutMs`
 * (within a report interval), beside the pool's bound of each statement, and never repeated by this
 * class: a write that timed out may or may not have run.
 */
export class WorkerIdAllocRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly timeoutMs = 5000,
  ) {}

  async findByIpPort(ipPort: string): Promise<WorkerIdAllocRow | null> {
    const rows: RawRow[] = await this.query(
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
      const result: { insertId: number } = await this.query(
        'INSERT INTO leaf_workerid_alloc (ip_port, ip, port, max_timestamp, owner, last_report) VALUES (?, ?, ?, NULL, ?, NOW(3))',
        [`${ip}:${port}`, ip, String(port), owner],
      );
      return Number(result.insertId);
    } catch (err) {
      if (isDuplicateEntry(err)) {
        return null;
      }
      throw err;
    }
  }

  /**
   * Takes the row for `owner` when it is free (no owner, a graceful stop), already ours, or its
   * holder has not reported for `livenessMs` by the database's clock. Resolves whether it did.
   */
  async claim(id: number, ipPort: string, owner: string, livenessMs: number): Promise<boolean> {
    const result: { affectedRows: number } = await this.query(
      `UPDATE leaf_workerid_alloc SET owner = ?, last_report = NOW(3)
        WHERE id = ? AND ip_port = ? AND (owner IS NULL OR owner = ? OR last_report IS NULL OR last_report < NOW(3) - INTERVAL ? MICROSECOND)`,
      [owner, id, ipPort, owner, livenessMs * 1000],
    );
    return Number(result.affectedRows) > 0;
  }

  /**
   * Departed rows with ids 1..maxId whose recorded time is at most `latest` (a taker would be
   * refused past it), the oldest recorded time first (the least wait for a taker). `graceMs`: how
   * long a holder must have been silent.
   */
  async departed(maxId: number, graceMs: number, latest: number, limit: number): Promise<number[]> {
    const rows: Array<{ id: number | string }> = await this.query(
      `SELECT id FROM leaf_workerid_alloc
        WHERE id BETWEEN 1 AND ? AND COALESCE(max_timestamp, 0) <= ? AND ${DEPARTED}
        ORDER BY COALESCE(max_timestamp, 0), id LIMIT ${Number(limit)}`,
      [maxId, latest, graceMs * 1000],
    );
    return rows.map((r) => Number(r.id));
  }

  /**
   * Takes over a departed row for this ip:port in ONE conditional update (the departed test is
   * re-checked on the locked row), so two instances can never both take it. Keeps max_timestamp:
   * the new holder starts after it. `taken`; `gone`: no longer departed; `ip-port-in-use`: another
   * row has this ip:port by now (another start with the same identity got one first).
   */
  async takeOver(id: number, ip: string, port: number, owner: string, graceMs: number): Promise<'taken' | 'gone' | 'ip-port-in-use'> {
    try {
      const result: { affectedRows: number } = await this.query(
        `UPDATE leaf_workerid_alloc SET ip_port = ?, ip = ?, port = ?, owner = ?, last_report = NOW(3)
          WHERE id = ? AND ${DEPARTED}`,
        [`${ip}:${port}`, ip, String(port), owner, id, graceMs * 1000],
      );
      return Number(result.affectedRows) > 0 ? 'taken' : 'gone';
    } catch (err) {
      if (isDuplicateEntry(err)) {
        return 'ip-port-in-use';
      }
      throw err;
    }
  }

  /**
   * Frees this ip:port's row whose id is outside the layout's range (never used for IDs in this
   * layout) by renaming its ip_port to `retired#{id}`, unless a live instance owns it. The row and
   * its max_timestamp stay; it becomes a departed row like any other.
   */
  async retire(id: number, ipPort: string, livenessMs: number): Promise<boolean> {
    const result: { affectedRows: number } = await this.query(
      `UPDATE leaf_workerid_alloc SET ip_port = CONCAT('retired#', id), owner = NULL
        WHERE id = ? AND ip_port = ? AND (owner IS NULL OR last_report IS NULL OR last_report < NOW(3) - INTERVAL ? MICROSECOND)`,
      [id, ipPort, livenessMs * 1000],
    );
    return Number(result.affectedRows) > 0;
  }

  /** Deletes a row this start has just inserted (out of range: never used for an ID). */
  async deleteInserted(id: number, owner: string): Promise<void> {
    await this.query('DELETE FROM leaf_workerid_alloc WHERE id = ? AND owner = ? AND max_timestamp IS NULL', [id, owner]);
  }

  async holder(id: number): Promise<WorkerIdHolder | null> {
    const rows: Array<{
      owner: string | null;
      ip_port: string;
      last_report: string | null;
      ago_ms: string | number | null;
      max_timestamp: string | number | null;
    }> = await this.query(
        `SELECT owner, ip_port, CAST(last_report AS CHAR) AS last_report, TIMESTAMPDIFF(MICROSECOND, last_report, NOW(3)) DIV 1000 AS ago_ms, max_timestamp
           FROM leaf_workerid_alloc WHERE id = ?`,
        [id],
      );
    if (rows.length === 0) {
      return null;
    }
    const r = rows[0];
    return {
      owner: r.owner,
      ipPort: r.ip_port,
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
    const result: { affectedRows: number } = await this.query(
      `UPDATE leaf_workerid_alloc SET max_timestamp = GREATEST(COALESCE(max_timestamp, 0), ?), last_report = NOW(3)
        WHERE id = ? AND owner = ?`,
      [until, id, owner],
    );
    return Number(result.affectedRows) > 0;
  }

  /** Graceful stop: records the last ID's time exactly and frees the row (if still ours). */
  async release(id: number, owner: string, maxTimestamp: number): Promise<void> {
    await this.query('UPDATE leaf_workerid_alloc SET max_timestamp = ?, owner = NULL WHERE id = ? AND owner = ?', [
      maxTimestamp,
      id,
      owner,
    ]);
  }

  /** Other rows reported since `since`, most recent first. */
  async recentOthers(id: number, since: number, limit: number): Promise<WorkerIdAllocRow[]> {
    const rows: RawRow[] = await this.query(
      `SELECT id, ip_port, ip, port, max_timestamp FROM leaf_workerid_alloc
        WHERE id <> ? AND max_timestamp >= ? ORDER BY max_timestamp DESC LIMIT ${Number(limit)}`,
      [id, since],
    );
    return rows.map(toRow);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private query<T = any>(sql: string, params: unknown[]): Promise<T> {
    return withTimeout<T>(this.dataSource.query(sql, params), this.timeoutMs, 'MySQL (leaf_workerid_alloc)');
  }
}

/** A unique key violation (uk_ip_port): MySQL's ER_DUP_ENTRY, as mysql2 and TypeORM report it. */
function isDuplicateEntry(err: unknown): boolean {
  const code = (err as { driverError?: { code?: string }; code?: string }).driverError?.code ?? (err as { code?: string }).code;
  return code === 'ER_DUP_ENTRY';
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
