/** The strict text-format parser the metrics tests rely on: it must refuse what a Prometheus server would. */
import { describe, expect, it } from 'vitest';
import { histogramSeries, parsePrometheusText } from '../helpers/prometheus-text.js';

const HISTOGRAM = `# HELP x_seconds A "latency" \\\\ with\\nlines
# TYPE x_seconds histogram
x_seconds_bucket{le="0.1",ingress="http"} 1
x_seconds_bucket{le="+Inf",ingress="http"} 2
x_seconds_sum{ingress="http"} 0.3
x_seconds_count{ingress="http"} 2
x_seconds_bucket{le="0.1",ingress="smtp"} 0
x_seconds_bucket{le="+Inf",ingress="smtp"} 5
x_seconds_sum{ingress="smtp"} 9e-1
x_seconds_count{ingress="smtp"} 5
`;

describe('parsePrometheusText', () => {
  it('keeps each label set of a histogram apart, with its buckets, sum and count', () => {
    const family = parsePrometheusText(HISTOGRAM).get('x_seconds');
    expect(family?.help).toBe('A "latency" \\ with\nlines');
    expect(histogramSeries(family!)).toEqual([
      {
        labels: { ingress: 'http' },
        buckets: [
          { le: 0.1, count: 1 },
          { le: Infinity, count: 2 },
        ],
        sum: 0.3,
        count: 2,
      },
      {
        labels: { ingress: 'smtp' },
        buckets: [
          { le: 0.1, count: 0 },
          { le: Infinity, count: 5 },
        ],
        sum: 0.9,
        count: 5,
      },
    ]);
  });

  it('reads escaped label values and the special values', () => {
    const family = parsePrometheusText(
      '# TYPE g gauge\ng{a="q\\"u\\\\o\\nte",b="x"} +Inf\ng{a="y"} NaN 1700000000000\n',
    ).get('g');
    expect(family?.samples[0]).toEqual({ name: 'g', labels: { a: 'q"u\\o\nte', b: 'x' }, value: Infinity });
    expect(family?.samples[1]?.value).toBeNaN();
  });

  it.each([
    ['a garbage line', '# TYPE a gauge\ngarbage {{{\n'],
    ['a value that is not a number', '# TYPE a counter\na{x="1"} notanumber\n'],
    ['an invalid label name', '# TYPE a gauge\na{1x="1"} 1\n'],
    ['an unquoted label value', '# TYPE a gauge\na{x=1} 1\n'],
    ['a family repeated after another', '# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\n# TYPE a gauge\n'],
    ['a series repeated', '# TYPE a gauge\na{x="1"} 1\na{x="1"} 2\n'],
    ['a sample of another family', '# TYPE a histogram\na_bucket{le="1"} 1\na_total 3\n'],
    ['a bucket without le', '# TYPE a histogram\na_bucket 1\n'],
    ['an unknown type', '# TYPE a gaugeish\n'],
    ['a missing final line feed', '# TYPE a gauge\na 1'],
  ])('refuses %s', (_what, text) => {
    expect(() => parsePrometheusText(text)).toThrow();
  });
});
