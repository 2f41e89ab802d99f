/** One `curl` line of a README's `sh` blocks, with the output its `# →` comment shows. */
export interface CurlExample {
  /** 1-based line of the curl command. */
  line: number;
  command: string;
  /** What curl prints, as the README shows it (`…` = text left out, `<…>` = a value that varies). */
  expected: string | null;
  /** The shell assignments above it in the README (`T='Authorization: …'`), in order. */
  assignments: string[];
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
const OUTPUT = /^#\s*→\s?(.*)$/;

/**
 * The curl examples of the `sh` code blocks of a Markdown text, in order. The output shown is
 * after `# → ` on the curl line, or on the comment line right below it (`# → …`).
 */
export function curlExamples(markdown: string): CurlExample[] {
  const lines = markdown.split('\n');
  const out: CurlExample[] = [];
  const assignments: string[] = [];
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const opening = /^```(\S*)/.exec(line);
    if (opening) {
      fence = fence === null ? opening[1] : null;
      continue;
    }
    if (fence !== 'sh') {
      continue;
    }
    if (ASSIGNMENT.test(line)) {
      assignments.push(line.replace(/\s+#\s.*$/, ''));
      continue;
    }
    if (!line.startsWith('curl ')) {
      continue;
    }
    const comment = /\s+#\s/.exec(line);
    const command = comment ? line.slice(0, comment.index) : line;
    const sameLine = comment ? OUTPUT.exec(line.slice(comment.index).trim()) : null;
    const below = OUTPUT.exec((lines[i + 1] ?? '').trim());
    out.push({ line: i + 1, command, expected: sameLine?.[1] ?? below?.[1] ?? null, assignments: [...assignments] });
  }
  return out;
}

/** A pattern for what the README shows: literal text, `…` any text, `<…>` one value (no spaces, quotes, commas, brackets). */
export function outputPattern(expected: string): RegExp {
  const parts = expected.split(/(…|<[^<>]+>)/);
  const source = parts
    .map((part) => {
      if (part === '…') {
        return '[\\s\\S]*?';
      }
      if (/^<[^<>]+>$/.test(part)) {
        return '[^\\s",\\]}]+';
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}$`);
}
