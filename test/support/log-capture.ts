/** One JSON log line as pino writes it. */
export type LogLine = Record<string, unknown> & { level: string; msg: string };

/** A log destination (startService's `logDestination`) that keeps the JSON lines. */
export function captureLog(): { lines: LogLine[]; stream: { write(s: string): void } } {
  const lines: LogLine[] = [];
  return { lines, stream: { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) } };
}
