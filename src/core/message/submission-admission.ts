/**
 * Admission of submitted messages: each item resolved against the caller's
 * tenant and its accounts, and the suppression list checked per tenant.
 */
import type { AccountChoice } from '../account/account.js';
import { pickAccount, type AccountPick } from '../account/default-account.js';
import { headerLookup, routeMessage, type RoutingRule } from '../account/routing.js';
import { normalizeAddress } from '../address.js';
import type { IdSource } from '../clock.js';
import { toPriority, WAITING_STATES, type NewMessage, type PriorityLabel } from './message.js';
import type { MessageAdmin } from './admin.js';
import { WHOLE_TENANT } from './commands.js';
import type { AdminStore } from '../ports.js';
import type { Principal } from '../tenant/principal.js';
import type { MessageQueue } from './queue.js';
import { noDefaultRefusal, refusal, type Refusal, type RejectionCode } from './rejection.js';

/** One message as the edge parsed it; `problem` set when its shape was already invalid. */
export interface SubmissionItem {
  /** Position in the request, so a client can match a rejection without an id. */
  index: number;
  id: string | null;
  problem?: string;
  tenantId?: string | undefined;
  accountId?: string | undefined;
  priority?: number | PriorityLabel | undefined;
  message?: Omit<NewMessage, 'tenantId' | 'accountId' | 'priority' | 'suspended'>;
  /** The message's headers, for routing rules that read one; only while it is admitted, never stored from here. */
  headers?: ReadonlyArray<{ name: string; value: string }>;
}

/** What admission needs of a tenant, read once per commit group. */
export interface TenantContext {
  accounts: AccountChoice[];
  /** Its routing rules: which account a message that names none goes through. */
  routes: RoutingRule[];
  /** Whether a message of this batch enters suspended. */
  holds(batchCode: string | null): boolean;
}

export function tenantContext(
  tenantId: string,
  store: AdminStore,
  messages: Pick<MessageAdmin, 'suspensions'>,
): TenantContext | null {
  // Only what admission needs: the whole tenant row would open its client credentials.
  const active = store.tenants.isActive(tenantId);
  if (active === null) return null;
  const suspensions = new Set(messages.suspensions(tenantId));
  const whole = !active || suspensions.has(WHOLE_TENANT);
  return {
    accounts: store.accounts.choices(tenantId),
    routes: store.tenants.routes(tenantId),
    holds: (batchCode) => whole || (batchCode !== null && suspensions.has(batchCode)),
  };
}

/** A message ready for admission, and its place in the request. */
export type Candidate = NewMessage & { index: number };

export function isRefusal(outcome: Candidate | Refusal): outcome is Refusal {
  return 'code' in outcome;
}

export function resolve(
  item: SubmissionItem,
  principal: Principal,
  tenantOf: (tenantId: string) => TenantContext | null,
  defaultPriority: number | PriorityLabel | undefined,
  ids: IdSource,
): Candidate | Refusal {
  if (item.problem !== undefined || item.message === undefined || item.id === null)
    return refusal('INVALID_MESSAGE', item.problem);
  const tenantId = principal.kind === 'tenant' ? principal.tenantId : item.tenantId;
  if (tenantId === undefined) return refusal('TENANT_REQUIRED');
  // A tenant key naming another tenant learns nothing about it.
  if (principal.kind === 'tenant' && item.tenantId !== undefined && item.tenantId !== principal.tenantId)
    return refusal('UNKNOWN_TENANT');
  const tenant = tenantOf(tenantId);
  if (tenant === null) return refusal('UNKNOWN_TENANT');
  const { message } = item;
  const priority = toPriority(item.priority ?? defaultPriority ?? 2);
  const pick = chooseAccount(tenant, item, priority);
  if (pick.kind === 'unknown') return refusal('UNKNOWN_ACCOUNT');
  if (pick.kind === 'no-default') return noDefaultRefusal(pick.accountIds);
  const { account } = pick;
  // Every field named (no spread): one object shape for every message, which the
  // engine copies and reads faster; a field added to NewMessage fails to compile here.
  return {
    index: item.index,
    tenantId,
    id: message.id,
    accountId: account.id,
    priority,
    batchCode: message.batchCode,
    deferredUntil: message.deferredUntil,
    content: message.content,
    subject: message.subject,
    messageId: message.messageId ?? generatedMessageId(message.mailFrom, ids),
    mailFrom: message.mailFrom,
    rcptTo: message.rcptTo,
    sizeBytes: message.sizeBytes,
    suspended: tenant.holds(message.batchCode),
    envelope: message.envelope ?? null,
  };
}

/** The account named, else the one the tenant's routing rules choose (routing.ts), else its default. */
function chooseAccount(tenant: TenantContext, item: SubmissionItem, priority: number): AccountPick<AccountChoice> {
  if (item.accountId !== undefined || tenant.routes.length === 0 || item.message === undefined)
    return pickAccount(tenant.accounts, item.accountId);
  const { message } = item;
  const routed = routeMessage(
    tenant.routes,
    {
      mailFrom: message.mailFrom,
      batchCode: message.batchCode,
      priority,
      header: headerLookup(item.headers),
    },
    tenant.accounts,
  );
  if (routed.kind === 'none') return pickAccount(tenant.accounts, undefined);
  return pickAccount(tenant.accounts, routed.accountId);
}

/**
 * Fixes the Message-ID at submission, so that every attempt (a retry, a resend
 * after a crash) carries the same one and receivers can recognise a repeat.
 */
function generatedMessageId(mailFrom: string, ids: IdSource): string {
  const domain = mailFrom.slice(mailFrom.lastIndexOf('@') + 1) || 'mailproxy.invalid';
  return `<${ids.uuid()}@${domain}>`;
}

/**
 * Suppression, looked up once per tenant for the whole request. A message with a
 * suppressed recipient whose id was already handed off is "already sent" (a
 * client repeating itself), as the store would say of it without a suppression.
 */
export function admissionProblems(
  messages: readonly NewMessage[],
  queue: MessageQueue,
  now: number,
): Map<NewMessage, RejectionCode> {
  const problems = new Map<NewMessage, RejectionCode>();
  const byTenant = new Map<string, NewMessage[]>();
  for (const message of messages) {
    const group = byTenant.get(message.tenantId);
    if (group === undefined) byTenant.set(message.tenantId, [message]);
    else group.push(message);
  }
  for (const [tenantId, group] of byTenant) {
    const suppressed = queue.suppressed(
      tenantId,
      group.flatMap((message) => message.rcptTo),
      now,
    );
    if (suppressed.size === 0) continue;
    const held = group.filter((message) => message.rcptTo.some((address) => suppressed.has(normalizeAddress(address))));
    if (held.length === 0) continue;
    const states = queue.states(
      tenantId,
      held.map((message) => message.id),
    );
    for (const message of held) {
      const state = states.get(message.id);
      problems.set(message, state !== undefined && !WAITING_STATES.includes(state) ? 'ALREADY_SENT' : 'SUPPRESSED');
    }
  }
  return problems;
}
