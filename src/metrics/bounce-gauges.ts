/**
 * The bounce mailboxes' gauges, one label per mailbox (the instance's and the
 * configured tenants': a bounded set): connected, the poller lag, failures in
 * a row, and the messages handled by disposition.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { MailboxStatus } from '../core/bounce/index.js';

/** `collect()` at each scrape sets the metrics to the mailboxes' status. */
export function registerBounceGauges(registers: Registry[], statuses: () => MailboxStatus[]): { collect(): void } {
  const perMailbox = (name: string, help: string, labelNames: string[] = ['mailbox']): Gauge =>
    new Gauge({ name, help, labelNames, registers });
  const mailboxConnected = perMailbox(
    'mailproxy_bounce_mailbox_connected',
    '1 while the bounce mailbox connection is open',
  );
  const mailboxRoundAge = perMailbox(
    'mailproxy_bounce_mailbox_last_round_age_seconds',
    'Seconds since the bounce mailbox was last read to its end (the poller lag)',
  );
  const mailboxFailures = perMailbox(
    'mailproxy_bounce_mailbox_consecutive_failures',
    'Connection attempts failed in a row',
  );
  const mailboxHandled = new Counter({
    name: 'mailproxy_bounce_messages_total',
    help: 'Mailbox messages handled since the start, by disposition',
    labelNames: ['mailbox', 'disposition'],
    registers,
  });

  return {
    collect(): void {
      const now = Date.now();
      for (const metric of [mailboxConnected, mailboxRoundAge, mailboxFailures, mailboxHandled]) metric.reset();
      for (const status of statuses()) {
        const labels = { mailbox: status.mailbox };
        mailboxConnected.set(labels, status.connected ? 1 : 0);
        if (status.last_round_at !== null)
          mailboxRoundAge.set(labels, Math.max(0, (now - status.last_round_at) / 1000));
        mailboxFailures.set(labels, status.failures);
        for (const [disposition, count] of Object.entries(status.handled))
          mailboxHandled.inc({ ...labels, disposition }, count);
      }
    },
  };
}
