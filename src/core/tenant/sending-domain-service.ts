/**
 * Sending domains (DKIM) of a tenant: added with a selector (the daemon makes the keys and shows
 * the DNS records to publish), read, removed. A tenant key reaches its own tenant's domains, the
 * admin token any. Each write is audited and mirrored as a change of its tenant, so that fleet
 * mode carries the domains with the tenant's row (sealed).
 */
import { AppError, notFound } from '../app-error.js';
import type { ConfigWrites } from '../fleet/config-replica.js';
import { scopeTenant } from './principal.js';
import {
  checkDomainName,
  checkSelector,
  ed25519Selector,
  MAX_SENDING_DOMAINS,
  type DkimKey,
  type DkimKeyMaker,
  type SendingDomain,
} from './sending-domain.js';
import type { Tenant } from './tenant.js';
import { domainFindings, publishedSelectors, unanswered } from './domain-check.js';
import { createDomainRotation } from './sending-domain-rotation.js';
import {
  viewSendingDomain,
  type DomainCheck,
  type SendingDomainServiceDeps,
  type SendingDomainView,
} from './sending-domain-view.js';
import { tenantChange, type CommandContext } from './tenant-service.js';

export interface SendingDomainInput {
  tenantId?: string | undefined;
  domain: string;
  selector: string;
  /** An Ed25519 key too, signing beside the RSA one. */
  ed25519?: boolean | undefined;
}

/** A new domain's keys: RSA under `selector`, and Ed25519 beside it under its own selector when asked. */
function newKeys(maker: DkimKeyMaker, selector: string, ed25519: boolean): DkimKey[] {
  const made = (algorithm: DkimKey['algorithm'], name: string): DkimKey => ({
    algorithm,
    selector: name,
    ...maker.generate(algorithm),
  });
  return [made('rsa-sha256', selector), ...(ed25519 ? [made('ed25519-sha256', ed25519Selector(selector))] : [])];
}

/** Reading a tenant's domains, and checking one's DNS. */
function domainReads(deps: SendingDomainServiceDeps, tenantOf: (id: string) => Tenant) {
  const { store, clock } = deps;
  return {
    list(ctx: CommandContext, tenantId: string | undefined): SendingDomainView[] {
      const id = scopeTenant(ctx.principal, tenantId);
      return tenantOf(id).sendingDomains.map((domain) => viewSendingDomain(id, domain));
    },

    get(ctx: CommandContext, tenantId: string | undefined, domain: string): SendingDomainView {
      const id = scopeTenant(ctx.principal, tenantId);
      const found = tenantOf(id).sendingDomains.find((known) => known.domain === domain.toLowerCase());
      if (found === undefined) throw notFound('sending domain', domain);
      return viewSendingDomain(id, found);
    },

    /** What the DNS says of the domain now, against the keys we sign with and the relays its tenant sends through. */
    async check(ctx: CommandContext, tenantId: string | undefined, domain: string): Promise<DomainCheck> {
      const id = scopeTenant(ctx.principal, tenantId);
      const found = tenantOf(id).sendingDomains.find((known) => known.domain === domain.toLowerCase());
      if (found === undefined) throw notFound('sending domain', domain);
      const relays = store.accounts.list(id).map((account) => ({ accountId: account.id, host: account.host }));
      const read = await deps.dns.read(found, relays).then(
        (dns) => ({ findings: domainFindings(found, dns), published: publishedSelectors(found, dns) }),
        (error: unknown) => ({ findings: [unanswered(error)], published: [] }),
      );
      return {
        tenant_id: id,
        domain: found.domain,
        ok: read.findings.every((finding) => finding.status !== 'fail'),
        checked_ts: Math.floor(clock.now() / 1000),
        findings: read.findings,
        published_selectors: read.published,
      };
    },
  };
}

export function createSendingDomainService(deps: SendingDomainServiceDeps) {
  const { store, clock } = deps;
  const tenantOf = (id: string): Tenant => {
    const tenant = store.tenants.get(id);
    if (tenant === null) throw notFound('tenant', id);
    return tenant;
  };
  // Each write is a change of its tenant: fleet mode carries the domains with the tenant's row.
  const tenantChanged = tenantChange(deps);
  const record = (...args: Parameters<typeof tenantChanged>): void => {
    store.changes.record(tenantChanged(...args));
  };

  return {
    add(ctx: CommandContext, input: SendingDomainInput): SendingDomainView {
      const tenantId = scopeTenant(ctx.principal, input.tenantId);
      const domain = checkDomainName(input.domain);
      const selector = checkSelector(input.selector);
      // Keys are made before the transaction: an RSA key takes tens of milliseconds.
      const keys = newKeys(deps.keys, selector, input.ed25519 === true);
      const added: SendingDomain = { domain, keys, createdAt: clock.now() };
      return store.transaction(() => {
        const tenant = tenantOf(tenantId);
        if (tenant.sendingDomains.some((known) => known.domain === domain))
          throw new AppError('CONFLICT', 'the tenant has this sending domain already', { details: { domain } });
        if (tenant.sendingDomains.length >= MAX_SENDING_DOMAINS)
          throw new AppError('VALIDATION_FAILED', 'invalid request body', {
            details: [{ path: 'domain', message: `at most ${MAX_SENDING_DOMAINS} sending domains per tenant` }],
          });
        store.tenants.update({ ...tenant, sendingDomains: [...tenant.sendingDomains, added], updatedAt: clock.now() });
        const view = viewSendingDomain(tenantId, added);
        record(ctx, 'domain.add', 'tenant.domain_added', tenantId, { domain: view });
        return view;
      });
    },

    ...domainReads(deps, tenantOf),
    ...createDomainRotation(deps, tenantOf, record),

    remove(ctx: CommandContext, tenantId: string | undefined, domain: string): void {
      const id = scopeTenant(ctx.principal, tenantId);
      store.transaction(() => {
        const tenant = tenantOf(id);
        const left = tenant.sendingDomains.filter((known) => known.domain !== domain.toLowerCase());
        if (left.length === tenant.sendingDomains.length) throw notFound('sending domain', domain);
        store.tenants.update({ ...tenant, sendingDomains: left, updatedAt: clock.now() });
        record(ctx, 'domain.remove', 'tenant.domain_removed', id, { domain: domain.toLowerCase() });
      });
    },
  };
}

/** The writes shared across a fleet (config-replica.ts): they may wait for it. */
export const SHARED_DOMAIN_WRITES = ['add', 'remove', 'rotate', 'advance'] as const;
export type SendingDomainService = ConfigWrites<
  ReturnType<typeof createSendingDomainService>,
  (typeof SHARED_DOMAIN_WRITES)[number]
>;

/**
 * A domain's DNS check, and what it saw published moves a rotation on (and retires what is over):
 * GET /domains/{domain}/check and the daemon's own check both run this, over the service as the
 * composition hands it out (in fleet mode, `advance` is a shared write).
 */
export async function checkDomain(
  service: Pick<SendingDomainService, 'check' | 'advance'>,
  ctx: CommandContext,
  tenantId: string | undefined,
  domain: string,
): Promise<DomainCheck> {
  const checked = await service.check(ctx, tenantId, domain);
  await service.advance(ctx, tenantId, domain, checked.published_selectors);
  return checked;
}
