/**
 * Delivery counters and the pending gauge under the names genro-mail-proxy
 * dashboards already chart (`gmp_*`), labelled by tenant and account (both
 * created by the admin, so the label set stays bounded). Counted from the
 * events as the store writes them; pending is read from the queue at scrape.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { ACCEPTANCE_TIMEOUT, PEC_RECEIPT_TYPES } from '../core/pec/index.js';
import type { QueueCount } from '../core/message/index.js';
import { RATE_LIMIT_EXCEEDED } from '../core/account/index.js';

/** A `message.pec` event's text begins with its pec_event (store/pec-ledger.ts, store/pec-receipts.ts). */
const PEC_EVENTS: ReadonlySet<string> = new Set([...PEC_RECEIPT_TYPES, ACCEPTANCE_TIMEOUT]);
const pecEventOf = (text: string | null | undefined): string => {
  const prefix = (text ?? '').split(':', 1)[0] ?? '';
  return PEC_EVENTS.has(prefix) ? prefix : 'other';
};

export interface DeliveryMetrics {
  /** One outbox event (`message.sent`, ...) of a tenant's account, with its text. */
  observe(
    eventType: string,
    tenantId: string,
    accountId: string | null | undefined,
    text: string | null | undefined,
  ): void;
  /** Sets the pending gauge from the queue's counts (at scrape). */
  collect(): void;
}

export function registerDeliveryMetrics(registers: Registry[], pending: () => QueueCount[]): DeliveryMetrics {
  const labelNames = ['tenant_id', 'account_id'];
  const counter = (name: string, help: string) => new Counter({ name, help, labelNames, registers });
  const sent = counter('gmp_sent_total', 'Messages the relay accepted');
  const errors = counter('gmp_errors_total', 'Messages that ended in error (refused for good, expired)');
  const deferred = counter('gmp_deferred_total', 'Attempts the relay refused for now (the message is retried)');
  const rateLimited = counter(
    'gmp_rate_limited_total',
    "Messages refused by their account's sending limit (limit_behavior reject)",
  );
  const pendingGauge = new Gauge({
    name: 'gmp_pending_messages',
    help: 'Messages waiting: queued, deferred, on the wire or suspended',
    labelNames,
    registers,
  });
  const byType: Record<string, Counter> = {
    'message.sent': sent,
    'message.error': errors,
    'message.expired': errors,
    'message.deferred': deferred,
  };
  const pec = new Counter({
    name: 'mailproxy_pec_events_total',
    help: 'PEC receipts applied to messages, and missing acceptances, by pec_event',
    labelNames: [...labelNames, 'pec_event'],
    registers,
  });

  return {
    observe(eventType, tenantId, accountId, text) {
      if (eventType === 'message.pec' && accountId !== null && accountId !== undefined)
        pec.inc({ tenant_id: tenantId, account_id: accountId, pec_event: pecEventOf(text) });
      const metric = byType[eventType];
      if (metric === undefined || accountId === null || accountId === undefined) return;
      const labels = { tenant_id: tenantId, account_id: accountId };
      metric.inc(labels);
      if (eventType === 'message.error' && text === RATE_LIMIT_EXCEEDED) rateLimited.inc(labels);
    },
    collect() {
      pendingGauge.reset();
      const totals = new Map<string, { tenant_id: string; account_id: string; count: number }>();
      for (const row of pending()) {
        const key = `${row.tenantId}/${row.accountId}`;
        const total = totals.get(key) ?? { tenant_id: row.tenantId, account_id: row.accountId, count: 0 };
        total.count += row.count;
        totals.set(key, total);
      }
      for (const { tenant_id, account_id, count } of totals.values())
        pendingGauge.set({ tenant_id, account_id }, count);
    },
  };
}
