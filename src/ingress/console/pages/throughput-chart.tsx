/**
 * Outcomes per minute over the last hour as an inline SVG (no script, no
 * external file): one polyline per outcome, a labelled axis, and a text
 * summary for screen readers that the chart itself cannot give.
 */
import { THROUGHPUT_OUTCOMES, type ThroughputSeries } from '../../../core/message/index.js';
import { whenMs } from '../format.js';

const WIDTH = 600;
const HEIGHT = 160;
const PAD = { left: 36, right: 8, top: 8, bottom: 20 };
const COLOURS = { sent: '#1f7a3a', deferred: '#b7791f', failed: '#b3261e', bounced: '#6b3fa0' } as const;

export function ThroughputChart(props: { data: ThroughputSeries }) {
  const { data } = props;
  const scale = Math.max(1, data.peak);
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (minute: number): number => PAD.left + (data.minutes <= 1 ? 0 : (minute / (data.minutes - 1)) * plotW);
  const y = (count: number): number => PAD.top + plotH - (count / scale) * plotH;
  const summary = THROUGHPUT_OUTCOMES.map((outcome) => `${data.totals[outcome]} ${outcome}`).join(', ');
  return (
    <figure>
      <svg class="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby="chart-title chart-desc">
        <title id="chart-title">Outcomes per minute, last hour</title>
        <desc id="chart-desc">{`Since ${whenMs(data.since)}: ${summary}. Busiest minute: ${data.peak}.`}</desc>
        <line x1={PAD.left} y1={PAD.top + plotH} x2={WIDTH - PAD.right} y2={PAD.top + plotH} stroke="#8a96a3" />
        <line x1={PAD.left} y1={PAD.top} x2={PAD.left} y2={PAD.top + plotH} stroke="#8a96a3" />
        <text x={PAD.left - 4} y={PAD.top + 10} text-anchor="end" font-size="11" fill="#4a5560">
          {String(scale)}
        </text>
        <text x={PAD.left - 4} y={PAD.top + plotH} text-anchor="end" font-size="11" fill="#4a5560">
          0
        </text>
        <text x={PAD.left} y={HEIGHT - 4} font-size="11" fill="#4a5560">
          -60 min
        </text>
        <text x={WIDTH - PAD.right} y={HEIGHT - 4} text-anchor="end" font-size="11" fill="#4a5560">
          now
        </text>
        {THROUGHPUT_OUTCOMES.map((outcome) => (
          <polyline
            fill="none"
            stroke={COLOURS[outcome]}
            stroke-width="2"
            points={data.series[outcome]
              .map((count, minute) => `${x(minute).toFixed(1)},${y(count).toFixed(1)}`)
              .join(' ')}
          />
        ))}
      </svg>
      <figcaption>
        <ul class="legend">
          {THROUGHPUT_OUTCOMES.map((outcome) => (
            <li>
              <span class={`key key-${outcome}`} aria-hidden="true"></span>
              {outcome}: {data.totals[outcome]}
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}
