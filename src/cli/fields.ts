/**
 * The `key: value` blocks of the human views: one line per value, the values of
 * a block in one column, an object's fields indented below its key and a list
 * one item per line (`- item`), so nothing nested is ever printed as JSON.
 */
import { instant, text } from './output.js';

export type Pairs = readonly (readonly [string, unknown])[];

interface Line {
  depth: number;
  label: string;
  /** Absent on the heading of a nested block. */
  value?: string;
  /** In the block's value column (a list item's value follows its dash). */
  aligned: boolean;
}

const INDENT = '  ';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const nested = (value: unknown): boolean =>
  Array.isArray(value) ? value.length > 0 : isRecord(value) && Object.keys(value).length > 0;

/** `key: value` lines, values aligned in one column across the nesting levels. */
export function fields(pairs: Pairs): string {
  const lines: Line[] = [];
  pairLines(pairs, 0, lines);
  const width = Math.max(
    0,
    ...lines.filter((line) => line.aligned && line.value !== undefined).map((line) => labelOf(line).length),
  );
  return lines
    .map((line) => {
      const label = labelOf(line);
      if (line.value === undefined) return label;
      return line.aligned ? `${label.padEnd(width)} ${line.value}` : `${label} ${line.value}`;
    })
    .join('\n')
    .concat('\n');
}

const labelOf = (line: Line): string => INDENT.repeat(line.depth) + line.label;

function pairLines(pairs: Pairs, depth: number, lines: Line[]): void {
  for (const [key, value] of pairs) {
    if (!nested(value)) {
      lines.push({ depth, label: `${key}:`, value: text(value), aligned: true });
      continue;
    }
    lines.push({ depth, label: `${key}:`, aligned: true });
    if (Array.isArray(value)) for (const item of value as readonly unknown[]) itemLines(item, depth + 1, lines);
    else pairLines(Object.entries(value as Record<string, unknown>), depth + 1, lines);
  }
}

/** A list item: `- value`, or an object's fields with the dash on its first line (as YAML writes it). */
function itemLines(item: unknown, depth: number, lines: Line[]): void {
  if (!nested(item)) {
    lines.push({ depth, label: '-', value: text(item), aligned: false });
    return;
  }
  const first = lines.length;
  if (Array.isArray(item)) {
    lines.push({ depth, label: '-', aligned: false });
    for (const inner of item as readonly unknown[]) itemLines(inner, depth + 1, lines);
    return;
  }
  pairLines(Object.entries(item as Record<string, unknown>), depth + 1, lines);
  const head = lines[first] as Line;
  lines[first] = { ...head, depth, label: `- ${head.label}` };
}

/** The API's instants (`_ts` epoch seconds, `_at` ISO text) as UTC, at any depth. */
export function withInstants(value: unknown, key = ''): unknown {
  if ((key.endsWith('_ts') || key.endsWith('_at')) && (typeof value === 'number' || typeof value === 'string'))
    return instant(value);
  if (Array.isArray(value)) return (value as readonly unknown[]).map((item) => withInstants(item));
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, withInstants(inner, name)]));
}

/** Every field of an API object, in the API's order, instants as UTC. */
export function objectFields(object: Record<string, unknown>, skip: readonly string[] = []): string {
  return fields(Object.entries(withInstants(object) as Record<string, unknown>).filter(([key]) => !skip.includes(key)));
}
