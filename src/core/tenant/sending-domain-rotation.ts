/**
 * Key rotation of a sending domain, with two selectors so that no signature fails verification
 * at any moment: `rotate` makes the new keys (pending: published by the operator, not used yet);
 * `advance`, run after each DNS check (GET /domains/{domain}/check and the daily check), switches
 * signing to them once all are seen published, keeps the replaced keys published (retiring) for
 * `retire_after_seconds`, and drops retired keys whose time is over. Both are writes of the
 * tenant, shared in fleet mode.
 */
import { notFound } from '../app-error.js';
import type { CommandContext } from './tenant-service.js';
import { scopeTenant } from './principal.js';
import {
  beginRotation,
  checkSelector,
  completeRotation,
  DEFAULT_RETIRE_AFTER_MS,
  dropRetired,
  type SendingDomain,
} from './sending-domain.js';
import { viewSendingDomain, type SendingDomainServiceDeps, type SendingDomainView } from './sending-domain-view.js';
import type { Tenant } from './tenant.js';

type RecordChange = (
  ctx: CommandContext,
  command: string,
  eventType: string,
  tenantId: string,
  data: { [key: string]: unknown },
) => void;

export function createDomainRotation(
  deps: SendingDomainServiceDeps,
  tenantOf: (id: string) => Tenant,
  record: RecordChange,
) {
  const { store, clock } = deps;
  /** Replaces one domain of the tenant, in its row, and records it. */
  const save = (ctx: CommandContext, tenant: Tenant, next: SendingDomain, eventType: string): void => {
    const sendingDomains = tenant.sendingDomains.map((known) => (known.domain === next.domain ? next : known));
    store.tenants.update({ ...tenant, sendingDomains, updatedAt: clock.now() });
    record(ctx, `domain.${eventType}`, `tenant.domain_${eventType}`, tenant.id, {
      domain: viewSendingDomain(tenant.id, next),
    });
  };
  const domainOf = (tenant: Tenant, domain: string): SendingDomain => {
    const found = tenant.sendingDomains.find((known) => known.domain === domain.toLowerCase());
    if (found === undefined) throw notFound('sending domain', domain);
    return found;
  };

  return {
    rotate(
      ctx: CommandContext,
      tenantId: string | undefined,
      domain: string,
      input: { selector: string; retireAfterSeconds?: number | undefined },
    ): SendingDomainView {
      const id = scopeTenant(ctx.principal, tenantId);
      const selector = checkSelector(input.selector);
      const retireAfterMs =
        input.retireAfterSeconds === undefined ? DEFAULT_RETIRE_AFTER_MS : input.retireAfterSeconds * 1000;
      return store.transaction(() => {
        const tenant = tenantOf(id);
        const next = beginRotation(domainOf(tenant, domain), selector, deps.keys, retireAfterMs);
        save(ctx, tenant, next, 'rotation_begun');
        return viewSendingDomain(id, next);
      });
    },

    /**
     * After a DNS check (`published`: the selectors seen holding our keys): a rotation whose new
     * keys are all published completes, and retired keys whose time is over go. True when it changed anything.
     */
    advance(ctx: CommandContext, tenantId: string | undefined, domain: string, published: readonly string[]): boolean {
      const id = scopeTenant(ctx.principal, tenantId);
      return store.transaction(() => {
        const tenant = tenantOf(id);
        const now = clock.now();
        const current = domainOf(tenant, domain);
        const rotated = completeRotation(current, published, now);
        const next = dropRetired(rotated ?? current, now) ?? rotated;
        if (next === null) return false;
        save(ctx, tenant, next, rotated === null ? 'keys_retired' : 'rotated');
        return true;
      });
    },
  };
}
