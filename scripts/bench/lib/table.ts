/** One line of the result table. */
export interface Row {
  case: string;
  subject: string;
  /** Load generator of an HTTP row (autocannon, wrk). */
  load?: string;
  /** Median req/s over HTTP, when the case is HTTP. */
  reqPerSec?: number;
  /** Median IDs per second. */
  idsPerSec?: number;
  p50Ms?: number;
  p99Ms?: number;
  /** Server CPU time per request (µs), robust against other load on the machine. */
  cpuUsPerReq?: number;
  /** Ceiling CPU/req ÷ subject CPU/req: the ratio the subject would reach if CPU-bound alone. */
  cpuRatio?: number;
  /** Subject ÷ ceiling, and which ceiling. */
  ratio?: number;
  ceiling?: string;
  /**
   * The target ratio (or absolute figure), as text, and whether it was met ('unknown': too few
   * clean rounds to tell, lib/compare.ts).
   */
  target?: string;
  met?: boolean | 'unknown';
  note?: string;
}

const HEAD = [
  'case',
  'subject',
  'load',
  'req/s',
  'ids/s',
  'p50 ms',
  'p99 ms',
  'CPU µs/req',
  'ratio',
  'CPU ratio',
  'vs ceiling',
  'target',
  'met',
  'notes',
];

export function formatTable(rows: readonly Row[]): string {
  const cells = rows.map((r) => [
    r.case,
    r.subject,
    r.load ?? '',
    num(r.reqPerSec),
    num(r.idsPerSec),
    ms(r.p50Ms),
    ms(r.p99Ms),
    r.cpuUsPerReq === undefined ? '' : r.cpuUsPerReq.toFixed(1),
    r.ratio === undefined ? '' : r.ratio.toFixed(3),
    r.cpuRatio === undefined ? '' : r.cpuRatio.toFixed(3),
    r.ceiling ?? '',
    r.target ?? '',
    r.met === undefined ? '' : r.met === 'unknown' ? '?' : r.met ? 'yes' : 'NO',
    r.note ?? '',
  ]);
  const lines = [HEAD, HEAD.map(() => '---'), ...cells].map((c) => `| ${c.join(' | ')} |`);
  return lines.join('\n');
}

function num(n: number | undefined): string {
  return n === undefined ? '' : Math.round(n).toLocaleString('en-US');
}

function ms(n: number | undefined): string {
  return n === undefined ? '' : n.toFixed(n < 10 ? 2 : 1);
}

/** Ceiling CPU/req ÷ subject CPU/req, when both are known. */
export function cpuRatio(subject: { cpuUsPerReq?: number }, ceiling: { cpuUsPerReq?: number }): number | undefined {
  return subject.cpuUsPerReq && ceiling.cpuUsPerReq ? ceiling.cpuUsPerReq / subject.cpuUsPerReq : undefined;
}
