import { describe, expect, it } from 'vitest';
import type { Logger } from '../logger.js';
import type { EventOutcome, ProviderEvent } from '../provider/events.js';
import type { UnsubscribeClaim, UnsubscribeLinks } from './list-unsubscribe.js';
import type { SuppressionInput } from './suppression-service.js';
import type { Tenant } from './tenant.js';
import { createUnsubscribeService } from './unsubscribe-service.js';

const NOW = Date.UTC(2026, 10, 29, 12);
const CLAIM: UnsubscribeClaim = { tenantId: 'acme', messageId: 'inv-1', recipient: 'ann@example.net', list: 'weekly' };

/** A stand-in codec for the sealing port: a token is the claim's JSON; anything else opens to null. */
const links: UnsubscribeLinks = {
  issue: (claim) => JSON.stringify(claim),
  open: (token) => {
    try {
      return JSON.parse(token) as UnsubscribeClaim;
    } catch {
      return null;
    }
  },
};

function world(settled: EventOutcome[] | null = ['applied']) {
  const added: Array<{ tenantId: string | undefined; input: SuppressionInput; via: string | undefined }> = [];
  const events: ProviderEvent[] = [];
  const warnings: string[] = [];
  const log = { warn: (_fields: unknown, message: string) => warnings.push(message) } as unknown as Logger;
  const tenants = new Map([['acme', { id: 'acme', name: 'ACME Ltd' } as Tenant]]);
  const service = createUnsubscribeService({
    links,
    tenants: { get: (id) => tenants.get(id) ?? null },
    suppressions: {
      add: (ctx, tenantId, input) => {
        added.push({ tenantId, input, via: ctx.via });
        return {
          ...input,
          tenantId: tenantId ?? '',
          reason: null,
          source: 'unsubscribe',
          createdAt: NOW,
          expiresAt: null,
          digest: 'd',
        };
      },
    },
    events: {
      settle: async (_tenantId, given) => {
        events.push(...given);
        return settled;
      },
    },
    clock: { now: () => NOW },
    log,
  });
  return { service, added, events, warnings, tenants };
}

describe('the unsubscribe service', () => {
  it('previews without changing anything, the recipient shown without its local part', () => {
    const w = world();
    expect(w.service.preview(links.issue(CLAIM))).toEqual({
      ok: true,
      value: { sender: 'ACME Ltd', recipient: '…@example.net', list: 'weekly' },
    });
    expect(w.added).toEqual([]);
    expect(w.events).toEqual([]);
  });

  it("suppresses the recipient as the recipient's own entry, then records one event per message", async () => {
    const w = world();
    const done = await w.service.unsubscribe(links.issue(CLAIM), 'req-1');
    expect(done.ok).toBe(true);
    expect(w.added).toEqual([
      {
        tenantId: 'acme',
        via: 'unsubscribe',
        input: { address: 'ann@example.net', reason: 'unsubscribed from weekly', source: 'unsubscribe' },
      },
    ]);
    expect(w.events).toMatchObject([
      {
        provider: 'one_click',
        eventId: 'unsubscribe:inv-1',
        kind: 'unsubscribed',
        mailId: 'inv-1',
        at: NOW,
        list: 'weekly',
      },
    ]);
    // The same message's link again is the same event: the settlement applies it once.
    await w.service.unsubscribe(links.issue({ ...CLAIM }), null);
    expect(new Set(w.events.map((event) => event.eventId))).toEqual(new Set(['unsubscribe:inv-1']));
  });

  it('keeps the suppression when the message cannot be reached, and says so', async () => {
    const w = world(null);
    expect((await w.service.unsubscribe(links.issue(CLAIM), null)).ok).toBe(true);
    expect(w.added).toHaveLength(1);
    expect(w.warnings).toHaveLength(1);
  });

  it('answers no such link, changing nothing, for a token that does not open or whose tenant is gone', async () => {
    const w = world();
    expect(await w.service.unsubscribe('forged', null)).toEqual({ ok: false });
    expect(w.service.preview('forged')).toEqual({ ok: false });
    w.tenants.delete('acme');
    expect(await w.service.unsubscribe(links.issue(CLAIM), null)).toEqual({ ok: false });
    expect(w.added).toEqual([]);
    expect(w.events).toEqual([]);
  });
});
