/** An account as an operator writes it, merged over the stored one: what is left out keeps its stored value or takes its default. */
import type { WebhookSettings } from '../provider/events.js';
import {
  DEFAULT_FAILOVER_AFTER_SECONDS,
  IMPLICIT_TLS_PORT,
  tlsModeOfUseTls,
  type Account,
  type AccountChoice,
  type LimitBehavior,
  type TlsMode,
} from './account.js';
import { mergeMailbox, type AccountMailboxInput } from './account-mailbox.js';
import { isDefaultOnSave } from './default-account.js';
import type { DestinationLimit } from './destination-limit.js';
import type { WarmUp } from './warm-up.js';

export interface AccountInput {
  id: string;
  tenantId?: string | undefined;
  host: string;
  port?: number | undefined;
  user?: string | null | undefined;
  /** `undefined` keeps the stored password on update; `null` clears it. */
  password?: string | null | undefined;
  /** Wins over `useTls` when both are given. */
  tlsMode?: TlsMode | undefined;
  /** genro's spelling (tlsModeOfUseTls); null is as good as not given. */
  useTls?: boolean | null | undefined;
  tlsRejectUnauthorized?: boolean | undefined;
  limitPerMinute?: number | null | undefined;
  limitPerHour?: number | null | undefined;
  limitPerDay?: number | null | undefined;
  limitBehavior?: LimitBehavior | undefined;
  fallbackAccounts?: string[] | undefined;
  failoverAfterSeconds?: number | undefined;
  /** `undefined` keeps the stored schedule; `null` clears it. */
  warmUp?: WarmUp | null | undefined;
  /** `undefined` keeps the stored rules; [] clears them. */
  destinationLimits?: DestinationLimit[] | undefined;
  maxConnections?: number | undefined;
  maxMessagesPerConnection?: number | undefined;
  isDefault?: boolean | undefined;
  isPec?: boolean | undefined;
  /** The account's own IMAP mailbox; omitted fields keep their stored values. */
  imap?: AccountMailboxInput;
  /** The relay's provider and its webhook verification; `undefined` keeps the stored one, `null` clears it. */
  provider?: WebhookSettings | null | undefined;
}

/** Submission port for each TLS mode when none is given. */
const DEFAULT_PORT: Record<TlsMode, number> = { implicit: 465, starttls: 587, none: 25 };

/**
 * The TLS mode the input asks for: `tls_mode` when given, else genro's `use_tls`. With
 * neither, port 465 means implicit TLS (as in genro); otherwise the stored mode stays,
 * and a new account requires STARTTLS (genro would connect in plain text: we send the
 * relay's credentials in the clear only when told so).
 */
function tlsModeOf(input: AccountInput, current: Account | null): TlsMode {
  const port = input.port ?? current?.port ?? null;
  if (input.tlsMode !== undefined) return input.tlsMode;
  if (input.useTls !== undefined && input.useTls !== null) return tlsModeOfUseTls(input.useTls, port);
  if (input.port === IMPLICIT_TLS_PORT) return 'implicit';
  return current?.tlsMode ?? (port === IMPLICIT_TLS_PORT ? 'implicit' : 'starttls');
}

/** `others`: the tenant's accounts before the save (the first one becomes the default). */
export function mergeAccount(
  input: AccountInput,
  tenantId: string,
  current: Account | null,
  others: readonly AccountChoice[],
  now: number,
): Account {
  const tlsMode = tlsModeOf(input, current);
  return {
    tenantId,
    id: input.id,
    host: input.host,
    port: input.port ?? current?.port ?? DEFAULT_PORT[tlsMode],
    user: input.user !== undefined ? input.user : (current?.user ?? null),
    password: input.password !== undefined ? input.password : (current?.password ?? null),
    tlsMode,
    tlsRejectUnauthorized: input.tlsRejectUnauthorized ?? current?.tlsRejectUnauthorized ?? true,
    limitPerMinute: input.limitPerMinute !== undefined ? input.limitPerMinute : (current?.limitPerMinute ?? null),
    limitPerHour: input.limitPerHour !== undefined ? input.limitPerHour : (current?.limitPerHour ?? null),
    limitPerDay: input.limitPerDay !== undefined ? input.limitPerDay : (current?.limitPerDay ?? null),
    limitBehavior: input.limitBehavior ?? current?.limitBehavior ?? 'defer',
    fallbackAccounts: input.fallbackAccounts ?? current?.fallbackAccounts ?? [],
    failoverAfterSeconds: input.failoverAfterSeconds ?? current?.failoverAfterSeconds ?? DEFAULT_FAILOVER_AFTER_SECONDS,
    warmUp: input.warmUp !== undefined ? input.warmUp : (current?.warmUp ?? null),
    destinationLimits: input.destinationLimits ?? current?.destinationLimits ?? [],
    maxConnections: input.maxConnections ?? current?.maxConnections ?? 5,
    maxMessagesPerConnection: input.maxMessagesPerConnection ?? current?.maxMessagesPerConnection ?? 100,
    isDefault: isDefaultOnSave(input.isDefault, current?.isDefault, others),
    // Clearing isPec keeps the mailbox: harmless (it is not watched) and ready if it is set again.
    isPec: input.isPec ?? current?.isPec ?? false,
    imap: mergeMailbox(input.imap ?? {}, current?.imap ?? null),
    provider: input.provider !== undefined ? input.provider : (current?.provider ?? null),
    // Saving the account is the operator's fix for whatever paused it: try again.
    pausedAt: null,
    pausedReason: null,
    createdAt: current?.createdAt ?? now,
    updatedAt: now,
  };
}
