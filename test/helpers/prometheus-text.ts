/**
 * A strict parser of the Prometheus text exposition format (0.0.4), for tests
 * that read GET /metrics as a scraper would. Strict on purpose: any line a
 * Prometheus server would refuse throws, naming the line. Written here because
 * the npm parsers checked were not fit: parse-prometheus-text-format (1.1.1,
 * unmaintained) folds every label set of a histogram into one and takes a
 * garbage line for a sample; prom2javascript (one release, 0.2.0) reads +Inf as
 * null and accepts a family repeated later and invalid label names.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  type: MetricType;
  help: string;
  samples: Sample[];
}

export interface HistogramSeries {
  /** The series' labels, `le` left out. */
  labels: Record<string, string>;
  /** In exposition order, `le` parsed (+Inf last). */
  buckets: Array<{ le: number; count: number }>;
  sum: number;
  count: number;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES: readonly string[] = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];
const SUFFIXES: Record<MetricType, readonly string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

/**
 * Go's ParseFloat as Prometheus uses it: decimal or exponent forms, and NaN and
 * Inf in any case (Go reads them case-insensitively; prom-client writes `Nan`).
 */
export function parseValue(text: string): number {
  if (/^nan$/i.test(text)) return Number.NaN;
  if (/^\+?inf(inity)?$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`not a number: ${text}`);
  return Number(text);
}

/** `{a="x",b="y\"z"}` from `at` (the brace): the labels and where the text goes on. */
function parseLabels(line: string, at: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let index = at + 1;
  while (line[index] !== '}') {
    const eq = line.indexOf('=', index);
    if (eq < 0) throw new Error('label without =');
    const name = line.slice(index, eq).trim();
    if (!LABEL_NAME.test(name) || name.startsWith('__')) throw new Error(`bad label name: ${name}`);
    if (name in labels) throw new Error(`label ${name} repeated`);
    if (line[eq + 1] !== '"') throw new Error(`label ${name}: value not quoted`);
    let value = '';
    let cursor = eq + 2;
    for (; cursor < line.length && line[cursor] !== '"'; cursor += 1) {
      if (line[cursor] !== '\\') {
        value += line[cursor];
        continue;
      }
      const escaped = line[(cursor += 1)];
      if (escaped === 'n') value += '\n';
      else if (escaped === '\\' || escaped === '"') value += escaped;
      else throw new Error(`label ${name}: bad escape \\${escaped ?? ''}`);
    }
    if (cursor >= line.length) throw new Error(`label ${name}: value not closed`);
    labels[name] = value;
    index = cursor + 1;
    if (line[index] === ',') index += 1;
    else if (line[index] !== '}') throw new Error(`after label ${name}: expected , or }`);
  }
  return { labels, end: index + 1 };
}

function parseSample(line: string): Sample {
  const nameEnd = line.search(/[{ ]/);
  if (nameEnd <= 0) throw new Error('sample without value');
  const name = line.slice(0, nameEnd);
  if (!METRIC_NAME.test(name)) throw new Error(`bad metric name: ${name}`);
  const { labels, end } = line[nameEnd] === '{' ? parseLabels(line, nameEnd) : { labels: {}, end: nameEnd };
  const rest = line.slice(end).trim().split(/ +/);
  if (rest.length < 1 || rest.length > 2 || rest[0] === '')
    throw new Error('expected a value and an optional timestamp');
  if (rest[1] !== undefined && !/^-?\d+$/.test(rest[1])) throw new Error(`bad timestamp: ${rest[1]}`);
  return { name, labels, value: parseValue(rest[0] as string) };
}

/** Every metric family of `text`, by name; throws on the first line that breaks the format. */
export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  if (text !== '' && !text.endsWith('\n')) throw new Error('the exposition must end with a line feed');
  const families = new Map<string, MetricFamily>();
  const seriesSeen = new Set<string>();
  let current: MetricFamily | null = null;
  const familyOf = (name: string): MetricFamily => {
    if (current?.name === name) return current;
    if (families.has(name)) throw new Error(`family ${name} appears again after another`);
    current = { name, type: 'untyped', help: '', samples: [] };
    families.set(name, current);
    return current;
  };
  text
    .split('\n')
    .slice(0, -1)
    .forEach((line, index) => {
      try {
        if (line.trim() === '') return;
        const meta = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
        if (meta === null) {
          if (line.startsWith('#')) return; // a comment
          const sample = parseSample(line);
          const family = current;
          const suffix =
            family === null ? undefined : SUFFIXES[family.type].find((end) => sample.name === family.name + end);
          if (family === null || suffix === undefined)
            throw new Error(`sample ${sample.name} outside its family (TYPE first)`);
          const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
          if (seriesSeen.has(key)) throw new Error(`series repeated: ${key}`);
          seriesSeen.add(key);
          if (family.type === 'histogram' && suffix === '_bucket' && sample.labels.le === undefined)
            throw new Error('bucket without le');
          family.samples.push(sample);
          return;
        }
        const [, keyword, name = '', rest = ''] = meta;
        if (!METRIC_NAME.test(name)) throw new Error(`bad metric name: ${name}`);
        const family = familyOf(name);
        if (keyword === 'HELP') {
          family.help = rest.replace(/\\(n|\\)/g, (_, escaped: string) => (escaped === 'n' ? '\n' : '\\'));
          return;
        }
        if (!TYPES.includes(rest) || family.samples.length > 0) throw new Error(`bad TYPE line for ${name}`);
        family.type = rest as MetricType;
      } catch (error) {
        throw new Error(`line ${index + 1} "${line}": ${(error as Error).message}`);
      }
    });
  return families;
}

/** A histogram family's series, each with its buckets, sum and count (not checked: the caller asserts). */
export function histogramSeries(family: MetricFamily): HistogramSeries[] {
  if (family.type !== 'histogram') throw new Error(`${family.name} is a ${family.type}, not a histogram`);
  const series = new Map<string, HistogramSeries>();
  for (const sample of family.samples) {
    const { le, ...labels } = sample.labels;
    const key = JSON.stringify(Object.entries(labels).sort());
    const entry = series.get(key) ?? { labels, buckets: [], sum: Number.NaN, count: Number.NaN };
    series.set(key, entry);
    if (sample.name.endsWith('_bucket')) entry.buckets.push({ le: parseValue(le as string), count: sample.value });
    else if (sample.name.endsWith('_sum')) entry.sum = sample.value;
    else entry.count = sample.value;
  }
  return [...series.values()];
}
