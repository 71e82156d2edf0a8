/**
 * GET /metrics read as Prometheus reads it (a strict text-format parser): mail
 * submitted over HTTP and SMTP, relayed to a real sink and reported to a real
 * client endpoint shows up in the latency histograms, counted once per
 * submission, handoff, relay transaction and reported event, with cumulative
 * buckets and label sets drawn from small fixed sets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { histogramSeries, parsePrometheusText, type MetricFamily } from '../helpers/prometheus-text.js';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';
import { openSubmission } from '../helpers/smtp-submit.js';

const HISTOGRAMS: Record<string, { label: string; values: (tenants: string[]) => string[] }> = {
  mailproxy_intake_latency_seconds: { label: 'ingress', values: () => ['http', 'smtp'] },
  mailproxy_queue_wait_seconds: { label: 'priority', values: () => ['0', '1', '2', '3'] },
  mailproxy_relay_response_seconds: {
    label: 'outcome',
    values: () => ['sent', 'deferred', 'failed', 'account_problem'],
  },
  mailproxy_report_latency_seconds: { label: 'tenant_id', values: (tenants) => tenants },
};

const smtpMessage = (id: string): string =>
  `From: app@example.com\r\nTo: rcpt@example.net\r\nSubject: smtp ${id}\r\nX-Genro-Mail-ID: ${id}\r\n\r\nbody of ${id}\r\n`;

describe('GET /metrics histograms', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let s: ReportScenario;
  let families: Map<string, MetricFamily>;

  const scrape = async (): Promise<Map<string, MetricFamily>> => {
    const response = await s.fx.admin('GET', '/metrics');
    expect(response.status).toBe(200);
    return parsePrometheusText(response.text);
  };
  /** The count of one histogram series, by its one label; 0 when absent. */
  const countOf = (all: Map<string, MetricFamily>, name: string, label: string, value: string): number =>
    histogramSeries(all.get(name) as MetricFamily).find((series) => series.labels[label] === value)?.count ?? 0;
  const sampleOf = (name: string, labels: Record<string, string>): number | undefined =>
    families.get(name)?.samples.find((sample) => JSON.stringify(sample.labels) === JSON.stringify(labels))?.value;

  beforeAll(async () => {
    s = await startReportScenario(cleanups);
    const acme = await s.addTenant('acme', '/acme');
    // Two HTTP submissions (of one and of two messages), two SMTP submissions in one session.
    expect((await s.fx.post(acme.key, [message('h-1')])).status).toBe(200);
    expect((await s.fx.post(acme.key, [message('h-2'), message('h-3', { priority: 'high' })])).status).toBe(200);
    const smtp = await openSubmission(s.fx.t.daemon.smtp?.plain?.port ?? 0);
    await smtp.login('acme', acme.key);
    for (const id of ['s-1', 's-2'])
      await smtp.send({ from: 'app@example.com', to: ['rcpt@example.net'] }, smtpMessage(id));
    smtp.close();

    await s.sink.waitForMessages(5);
    await s.fx.settle();
    await s.client.waitFor(
      'five sent items',
      (client) => client.items('/acme').filter((item) => item.event === 'sent').length >= 5,
    );
    // The report latency is observed once the client's answer is back: scrape until it shows.
    const deadline = Date.now() + 5000;
    do families = await scrape();
    while (
      countOf(families, 'mailproxy_report_latency_seconds', 'tenant_id', 'acme') < s.client.items('/acme').length &&
      Date.now() < deadline
    );
  });
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('counts intake once per submission answered, by ingress', () => {
    expect(countOf(families, 'mailproxy_intake_latency_seconds', 'ingress', 'http')).toBe(2);
    expect(countOf(families, 'mailproxy_intake_latency_seconds', 'ingress', 'smtp')).toBe(2);
  });

  it('counts one queue wait per handoff and one relay transaction per attempt, matching the sink and gmp_sent_total', () => {
    const waits = histogramSeries(families.get('mailproxy_queue_wait_seconds') as MetricFamily);
    expect(waits.reduce((sum, series) => sum + series.count, 0)).toBe(5);
    expect(countOf(families, 'mailproxy_queue_wait_seconds', 'priority', '1')).toBe(1);
    expect(countOf(families, 'mailproxy_relay_response_seconds', 'outcome', 'sent')).toBe(s.sink.messages.length);
    expect(sampleOf('gmp_sent_total', { tenant_id: 'acme', account_id: 'main' })).toBe(5);
    expect(histogramSeries(families.get('mailproxy_relay_response_seconds') as MetricFamily)).toHaveLength(1);
  });

  it("counts one report latency per event the tenant's client acknowledged", () => {
    expect(countOf(families, 'mailproxy_report_latency_seconds', 'tenant_id', 'acme')).toBe(
      s.client.items('/acme').length,
    );
  });

  it('keeps every histogram cumulative, ending in +Inf equal to its count, with a non-negative sum', () => {
    for (const name of Object.keys(HISTOGRAMS)) {
      const all = histogramSeries(families.get(name) as MetricFamily);
      expect(all.length, name).toBeGreaterThan(0);
      for (const series of all) {
        const les = series.buckets.map((bucket) => bucket.le);
        expect(les, name).toEqual([...les].sort((a, b) => a - b));
        expect(les.at(-1), name).toBe(Number.POSITIVE_INFINITY);
        series.buckets.forEach((bucket, index) =>
          expect(bucket.count).toBeGreaterThanOrEqual(series.buckets[index - 1]?.count ?? 0),
        );
        expect(series.buckets.at(-1)?.count, name).toBe(series.count);
        expect(series.sum, name).toBeGreaterThanOrEqual(0);
      }
    }
  });

  it('labels each histogram with one label from a fixed set (tenants for report latency)', () => {
    for (const [name, { label, values }] of Object.entries(HISTOGRAMS)) {
      const family = families.get(name) as MetricFamily;
      expect(family.type).toBe('histogram');
      for (const sample of family.samples) {
        const { le: _le, ...labels } = sample.labels;
        expect(Object.keys(labels), name).toEqual([label]);
        expect(values(['acme']), name).toContain(labels[label]);
      }
    }
  });

  it('still has the backlog and lag gauges an operator alerts on', () => {
    for (const name of [
      'mailproxy_outbox_backlog',
      'mailproxy_outbox_oldest_unpublished_age_seconds',
      'mailproxy_bounce_mailbox_last_round_age_seconds',
      'mailproxy_report_oldest_unreported_age_seconds',
      'mailproxy_report_consecutive_failures',
    ]) {
      expect(families.get(name)?.type, name).toBe('gauge');
    }
    expect(sampleOf('mailproxy_outbox_backlog', {})).toBe(0);
    expect(sampleOf('mailproxy_report_consecutive_failures', { tenant_id: 'acme' })).toBe(0);
  });
});
