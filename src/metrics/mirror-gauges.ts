/**
 * The event mirror's gauges and totals: the outbox backlog, the publishes and
 * the command consumer, read from the mirror's own status at scrape time.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { MirrorStatus } from '../core/events/index.js';

type Reading = (status: MirrorStatus) => number | null;

/** `scraped()` at the start of each scrape: the collectors then share one status read. */
export function registerMirrorGauges(registers: Registry[], read: () => MirrorStatus | null): { scraped(): void } {
  let status: MirrorStatus | null = null;
  const statusNow = (): MirrorStatus | null => (status ??= read());
  const valueOf = (value: Reading): number | null => {
    const now = statusNow();
    return now === null ? null : value(now);
  };

  const gauge = (name: string, help: string, value: Reading): void => {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const v = valueOf(value);
        if (v !== null) this.set(v);
      },
    });
  };
  // A total kept by the loop itself: the counter is set to it at each scrape.
  const total = (name: string, help: string, value: Reading): void => {
    new Counter({
      name,
      help,
      registers,
      collect() {
        const v = valueOf(value);
        this.reset();
        if (v !== null) this.inc(v);
      },
    });
  };

  gauge('mailproxy_mirror_enabled', '1 when [nats] url is set', (s) => (s.enabled ? 1 : 0));
  gauge('mailproxy_mirror_connected', '1 while the mirror is connected to NATS and publishing', (s) =>
    s.state === 'connected' ? 1 : 0,
  );
  gauge('mailproxy_outbox_backlog', 'Outbox events not yet acknowledged by the stream', (s) => s.backlog);
  gauge(
    'mailproxy_outbox_oldest_unpublished_age_seconds',
    'Age of the oldest event not yet acknowledged by the stream',
    (s) => s.oldest_unpublished_age_seconds ?? 0,
  );
  gauge(
    'mailproxy_mirror_last_error_timestamp_seconds',
    'When publishing last failed (epoch seconds)',
    (s) => s.last_error_ts,
  );
  total('mailproxy_mirror_published_total', 'Events published to the stream since the start', (s) => s.published_total);
  total(
    'mailproxy_commands_handled_total',
    'Commands over JetStream handled since the start',
    (s) => s.commands?.handled ?? null,
  );
  total(
    'mailproxy_commands_dead_lettered_total',
    'Commands sent to the dead-letter subject since the start',
    (s) => s.commands?.dead_lettered ?? null,
  );
  gauge('mailproxy_commands_waiting', 'Commands waiting in the consumer (its lag)', (s) => s.commands?.waiting ?? null);

  return {
    scraped(): void {
      status = null;
    },
  };
}
