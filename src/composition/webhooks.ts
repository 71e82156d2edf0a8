/**
 * Provider webhooks: the four adapters, the tenant's accounts'
 * verification settings (read again only when the accounts change), the
 * ledger and the bounce policy. Composition only.
 */
import { readFileSync } from 'node:fs';
import type { Account } from '../core/account/index.js';
import type { BouncePolicy } from '../core/bounce/index.js';
import type { Clock, Logger, AccountRepository, WebhookTelemetry } from '../core/index.js';
import type { ProviderLedger, EventOutcome, ProviderEvent, WebhookSettings } from '../core/provider/index.js';
import {
  createMailgunAdapter,
  createPostmarkAdapter,
  createSendgridAdapter,
  createSesAdapter,
  fetchText,
  createWebhookService,
  type WebhookService,
} from '../ingress/webhooks/index.js';

export interface WebhookSettingsConfig {
  snsCertificateHost: RegExp;
  snsCaFile: string | null;
  replayWindowMs: number;
}

/** How often the accounts are asked whether they changed. */
const VERSION_CHECK_MS = 1000;
/** How long a subscription confirmation's GET may take. */
const CONFIRM_TIMEOUT_MS = 10_000;

export function createWebhooks(deps: {
  settings: WebhookSettingsConfig;
  accounts: Pick<AccountRepository, 'list' | 'version'>;
  ledger: ProviderLedger;
  policy: BouncePolicy;
  telemetry: WebhookTelemetry;
  /** Fleet mode: the other nodes, for events no message here matched. */
  elsewhere?: (tenantId: string, events: readonly ProviderEvent[]) => Promise<EventOutcome[]>;
  clock: Clock;
  log: Logger;
}): WebhookService {
  const { settings } = deps;
  const ca = settings.snsCaFile === null ? undefined : readFileSync(settings.snsCaFile);
  // Every account's provider, opened (unsealed) once per change of the accounts rather than per request; whether
  // they changed is asked at most every VERSION_CHECK_MS (the question scans the accounts), so a changed key applies
  // within that.
  let cached: { version: string; checkedAt: number; accounts: Account[] } | null = null;
  const accounts = (): Account[] => {
    const now = deps.clock.now();
    if (cached !== null && now - cached.checkedAt < VERSION_CHECK_MS) return cached.accounts;
    const version = deps.accounts.version();
    if (cached?.version !== version)
      cached = {
        version,
        checkedAt: now,
        accounts: deps.accounts.list(null).filter((account) => account.provider !== null),
      };
    else cached.checkedAt = now;
    return cached.accounts;
  };
  return createWebhookService({
    adapters: [
      createSesAdapter({ certificateHost: settings.snsCertificateHost, ca }),
      createSendgridAdapter({ replayWindowMs: settings.replayWindowMs }),
      createMailgunAdapter({ replayWindowMs: settings.replayWindowMs }),
      createPostmarkAdapter(),
    ],
    settingsOf: (tenantId, provider) =>
      accounts().flatMap((account): WebhookSettings[] =>
        account.tenantId === tenantId && account.provider?.provider === provider ? [account.provider] : [],
      ),
    ledger: deps.ledger,
    policy: deps.policy,
    telemetry: deps.telemetry,
    ...(deps.elsewhere === undefined ? {} : { elsewhere: deps.elsewhere }),
    confirmSubscription: async (url) => void (await fetchText(new URL(url), ca, CONFIRM_TIMEOUT_MS)),
    clock: deps.clock,
    log: deps.log.child({ component: 'webhooks' }),
  });
}
