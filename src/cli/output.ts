/**
 * What the verbs print: aligned tables for people (the `key: value` blocks are
 * fields.ts), the API's JSON unchanged for scripts (--json), and a progress line
 * on a terminal's stderr. Output goes to the streams given, never to the log.
 */

export interface Column<R> {
  header: string;
  value: (row: R) => unknown;
}

/** One value as one line of text: absent as `-`, lists joined, an object's fields as `key: value, ...`. */
export function text(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(text).join(', ');
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.length === 0 ? '-' : entries.map(([key, inner]) => `${key}: ${text(inner)}`).join(', ');
  }
  // One line per row: a relay's multi-line reply must not break the table.
  return String(value).replace(/\s*[\r\n]+\s*/g, ' ');
}

/** Epoch seconds (the API's `_ts` fields) as `2026-11-23 21:17:58Z`. */
export function instant(epochSeconds: unknown): string {
  if (typeof epochSeconds !== 'number')
    return typeof epochSeconds === 'string' ? epochSeconds.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '-';
  return new Date(epochSeconds * 1000)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** Cuts long cells (subjects, errors) so a row stays a row; --json has them whole. */
export const clip = (value: string, width: number): string =>
  value.length <= width ? value : `${value.slice(0, width - 1)}…`;

export function table<R>(rows: readonly R[], columns: readonly Column<R>[]): string {
  const cells = rows.map((row) => columns.map((column) => text(column.value(row))));
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...cells.map((row) => (row[index] ?? '').length)),
  );
  const line = (values: string[]): string =>
    values
      .map((value, index) => (index === values.length - 1 ? value : value.padEnd(widths[index] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((column) => column.header)), ...cells.map(line)].join('\n') + '\n';
}

export const writeJson = (stdout: NodeJS.WritableStream, value: unknown): void => {
  stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

export interface Progress {
  update(done: number): void;
  finish(): void;
}

/** A progress line redrawn in place on a terminal, at most ten times a second; silent elsewhere (logs, pipes). */
export function progress(stderr: NodeJS.WriteStream, label: string, total: number | null): Progress {
  if (stderr.isTTY !== true) return { update: () => {}, finish: () => {} };
  let drawnAt = 0;
  let shown = false;
  const draw = (done: number): void => {
    const percent = total === null || total === 0 ? '' : ` (${Math.floor((done / total) * 100)}%)`;
    stderr.write(`\r${label} ${bytes(done)}${total === null ? '' : ` of ${bytes(total)}`}${percent}\x1b[K`);
    shown = true;
  };
  return {
    update(done) {
      const now = performance.now();
      if (now - drawnAt < 100) return;
      drawnAt = now;
      draw(done);
    },
    finish() {
      if (shown) stderr.write('\n');
    },
  };
}

export function bytes(count: number): string {
  if (count < 1024) return `${count} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = count / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
