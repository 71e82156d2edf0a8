/**
 * Adaptive backoff's paces (delivery/relay-paces.ts) at scrape time: the messages per
 * minute an account's relay is sent while it is paced after pushback, and the pushbacks
 * that lowered it. An account that is not paced has no series: it goes at its limits.
 */
import { Gauge, type Registry } from 'prom-client';
import { shownPace, type AccountPace } from '../core/delivery/index.js';

export function registerPaceGauges(registers: Registry[], paces: () => AccountPace[]): { collect(): void } {
  const labelNames = ['tenant_id', 'account_id'];
  const pace = new Gauge({
    name: 'mailproxy_account_pace',
    help: 'Messages per minute an account is sent at because its relay pushed back (only while paced)',
    labelNames,
    registers,
  });
  const pushbacks = new Gauge({
    name: 'mailproxy_account_pushbacks',
    help: 'Pushbacks (421/451 "too fast") that lowered or paused a paced account since the start',
    labelNames,
    registers,
  });
  return {
    collect() {
      pace.reset();
      pushbacks.reset();
      for (const account of paces()) {
        const labels = { tenant_id: account.tenantId, account_id: account.accountId };
        pace.set(labels, shownPace(account.perMinute));
        pushbacks.set(labels, account.pushbacks);
      }
    },
  };
}
