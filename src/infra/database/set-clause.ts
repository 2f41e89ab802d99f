/**
 * The `SET` list of a partial UPDATE: `col = ?` for each column whose value is not undefined (null
 * is a value: it clears the column), and those values in the same order. `sql` is '' when there is
 * nothing to set.
 */
export function setClause(columns: Record<string, unknown>): { sql: string; values: unknown[] } {
  const set = Object.entries(columns).filter(([, value]) => value !== undefined);
  return { sql: set.map(([column]) => `${column} = ?`).join(', '), values: set.map(([, value]) => value) };
}
