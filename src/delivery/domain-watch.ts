/**
 * The daemon's own check of every sending domain, every `dns.check_interval_seconds` and soon after
 * an account is saved (its relay is one SPF must authorise): each domain's DNS is read, a rotation
 * whose new keys are published completes, retired keys whose time is over go, and the domains
 * that fail are kept for GET /status (`domains`) and the log, so that a tenant is warned before
 * the receivers refuse its mail. One domain at a time; a loop stoppable and driven by `tick()`.
 */
import type { Clock, Logger } from '../core/index.js';
import {
  checkDomain,
  type CommandContext,
  type FailingDomain,
  type SendingDomainService,
  type Tenant,
} from '../core/tenant/index.js';
import { createPeriodicLoop, type PeriodicLoop } from '../runtime/index.js';

export interface DomainWatch {
  loop: PeriodicLoop;
  failing(): FailingDomain[];
  /** An account was saved: check again soon (at the loop's next step). */
  recheck(): void;
}

/** The daemon acting by itself: recorded as the admin `@daemon`. */
const DAEMON: CommandContext = { principal: { kind: 'admin' }, correlationId: null, via: 'daemon' };

export function createDomainWatch(deps: {
  domains: SendingDomainService;
  tenants: { list(): Tenant[] };
  intervalMs: number;
  clock: Clock;
  log: Logger;
}): DomainWatch {
  const failing = new Map<string, FailingDomain>();
  const run = async (): Promise<void> => {
    const tenants = deps.tenants.list();
    // Domains removed since: nothing to warn of.
    const known = new Set(tenants.flatMap((tenant) => tenant.sendingDomains.map((d) => `${tenant.id}/${d.domain}`)));
    for (const key of failing.keys()) if (!known.has(key)) failing.delete(key);
    for (const tenant of tenants)
      for (const { domain } of tenant.sendingDomains) {
        const key = `${tenant.id}/${domain}`;
        try {
          const checked = await checkDomain(deps.domains, DAEMON, tenant.id, domain);
          const failed = checked.findings
            .filter((finding) => finding.status === 'fail')
            .map((finding) => finding.check);
          if (failed.length === 0) failing.delete(key);
          else {
            if (!failing.has(key))
              deps.log.warn({ tenantId: tenant.id, domain, failing: failed }, 'sending domain fails its DNS checks');
            failing.set(key, { tenant_id: tenant.id, domain, checked_ts: checked.checked_ts, failing: failed });
          }
        } catch (error) {
          deps.log.warn(
            { err: error, tenantId: tenant.id, domain },
            'sending domain check failed; tried again next time',
          );
        }
      }
  };
  const loop = createPeriodicLoop({
    name: 'domain-checks',
    intervalMs: deps.intervalMs,
    run,
    log: deps.log,
    clock: deps.clock,
  });
  return {
    loop,
    failing: () => [...failing.values()],
    recheck: () => {
      void loop.tick().catch((error: unknown) => deps.log.warn({ err: error }, 'sending domain checks failed'));
    },
  };
}
