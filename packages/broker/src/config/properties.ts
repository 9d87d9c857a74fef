/**
 * A Java-style .properties file, the format of the original broker's configuration: `key=value`,
 * `key: value` or `key value`; `#` and `!` comment lines; a trailing backslash continues a line.
 * Returns entries with their line numbers, so an error can say where.
 */
export interface Property {
  key: string;
  value: string;
  line: number;
}

export function parseProperties(text: string): Property[] {
  const out: Property[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const lineNumber = i + 1;
    let line = lines[i]!.replace(/^\s+/, '');
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    while (/(^|[^\\])(\\\\)*\\$/.test(line) && i + 1 < lines.length) {
      line = line.slice(0, -1) + lines[++i]!.replace(/^\s+/, '');
    }
    const match = /^((?:\\.|[^=:\s\\])+)\s*(?:[=:]\s*|\s+|$)(.*)$/.exec(line);
    if (!match) continue;
    out.push({
      key: unescapeProperty(match[1]!),
      value: unescapeProperty(match[2]!.replace(/\s+$/, '')),
      line: lineNumber,
    });
  }
  return out;
}

function unescapeProperty(s: string): string {
  return s.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, c: string) => {
    if (c.length === 5) return String.fromCharCode(Number.parseInt(c.slice(1), 16));
    return ({ t: '\t', n: '\n', r: '\r', f: '\f' } as Record<string, string>)[c] ?? c;
  });
}
