/**
 * Each account's last failed and last successful attempt, as the dispatcher
 * reports them (DeliveryTelemetry). Kept in memory only: it starts empty at
 * each start, which is what an operator looking at a live account wants; the
 * per-message history stays in the store (GET /messages/{id}).
 */
import type { AttemptReport, DeliveryTelemetry } from '../telemetry.js';

export interface LastError {
  text: string;
  replyCode: number | null;
  at: number;
}

export interface AccountAttempts {
  /** Kept after a later success: compare with `lastSuccessAt` to tell whether the account recovered. */
  lastError: LastError | null;
  lastSuccessAt: number | null;
}

export interface AttemptLog extends DeliveryTelemetry {
  of(tenantId: string, accountId: string): AccountAttempts;
}

const NONE: AccountAttempts = { lastError: null, lastSuccessAt: null };

export function createAttemptLog(): AttemptLog {
  // Keyed by accounts the admin created: bounded like the accounts table.
  const byAccount = new Map<string, AccountAttempts>();
  return {
    handedOff: () => undefined,
    claimed: () => undefined,
    attempted(attempt: AttemptReport) {
      const key = `${attempt.tenantId}/${attempt.accountId}`;
      const current = byAccount.get(key) ?? NONE;
      byAccount.set(
        key,
        attempt.outcome === 'sent'
          ? { ...current, lastSuccessAt: attempt.at }
          : { ...current, lastError: { text: attempt.text, replyCode: attempt.replyCode, at: attempt.at } },
      );
    },
    of: (tenantId, accountId) => byAccount.get(`${tenantId}/${accountId}`) ?? NONE,
  };
}
