/**
 * The metric names a PromQL expression reads, for tests that hold dashboards
 * and alert rules to what the daemon exports. Not a PromQL parser: strings,
 * label matchers, ranges and grouping label lists are taken out, then every
 * remaining identifier that is not a function, an aggregation or a keyword is
 * a metric name. Enough for the expressions we ship (their tests check it on
 * a misspelt name); a Grafana variable (`$instance`) only ever sits inside a
 * matcher or a range here.
 */

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'inf',
  'nan',
]);

export function promqlMetricNames(expr: string): string[] {
  const text = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' $1 ');
  const names = new Set<string>();
  for (const match of text.matchAll(/(?<![\w.$])[a-zA-Z_:][\w:]*/g)) {
    const after = text.slice((match.index ?? 0) + match[0].length);
    // A function call, or an aggregation with its grouping first (`sum by (le) (...)`).
    if (/^\s*\(/.test(after) || /^\s+(by|without)\b/.test(after)) continue;
    if (KEYWORDS.has(match[0].toLowerCase())) continue;
    names.add(match[0]);
  }
  return [...names];
}

/** The metric of a Grafana `label_values(metric, label)` variable query; null for any other query. */
export function labelValuesMetric(query: string): string | null {
  return /^\s*label_values\(\s*([a-zA-Z_:][\w:]*)\s*,/.exec(query)?.[1] ?? null;
}
