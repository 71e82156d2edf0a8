/**
 * Every route of the catalog × {no token, wrong token, expired tenant key,
 * admin token, tenant A's key, tenant B's key}, the expected status derived
 * from the route's documented access; then tenant isolation: neither tenant's
 * key sees, changes or learns of the other's messages, accounts, suppressions,
 * bounces, batches or reports, whatever ids it sends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Access } from '../../src/ingress/http/route-doc.js';
import { ROUTE_CATALOG } from '../../src/ingress/http/route-catalog.js';
import { api, type ApiResponse } from '../helpers/test-daemon.js';
import { callText, leaks, quiesce, type Credential } from './matrix-scan.js';
import { OWNERS, other, snapshot, startWorld, type Owner, type World } from './matrix-world.js';
import {
  FLEET_ONLY,
  implicitProbes,
  LINK_PROVEN,
  PER_ITEM_TENANT,
  PROBES,
  PROVIDER_SIGNED,
  type Call,
} from './route-probes.js';

const label = (route: { method: string; path: string }): string => `${route.method.toUpperCase()} ${route.path}`;

/** The statuses a credential may get from a route with this access; `owner` is whose resources the call names. */
function expected(route: string, access: Access, who: Credential, success: number[]): number[] {
  if (PROVIDER_SIGNED.has(route)) return [401];
  if (LINK_PROVEN.has(route)) return [404];
  if (access === 'public') return success;
  if (who === 'none' || who === 'wrong' || who === 'expired') return [401];
  if (who === 'admin') return FLEET_ONLY.has(route) ? [409] : success;
  if (access === 'admin') return [403];
  // Tenant routes: its own resources succeed; tenant A's, named by tenant B's key, do not exist for it.
  if (who === 'a') return success;
  return PER_ITEM_TENANT.has(route) ? [200] : [404];
}

describe('route × credential matrix and tenant isolation', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let w: World;
  const problems: string[] = [];
  let requests = 0;

  const token = (who: Credential): string | undefined =>
    ({
      none: undefined,
      wrong: `mpk_${'x'.repeat(43)}`,
      expired: w.expiredKey,
      admin: w.adminToken,
      a: w.tenants.a.key,
      b: w.tenants.b.key,
    })[who];

  /** Sends `call` as `who` (half the routes by `Authorization: Bearer`, half by `X-API-Token`), and scans the answer. */
  const send = async (who: Credential, call: Call, headerStyle: number, sentBefore = ''): Promise<ApiResponse> => {
    const secret = token(who);
    const headers: Record<string, string> =
      secret === undefined
        ? {}
        : headerStyle % 2 === 0
          ? { authorization: `Bearer ${secret}` }
          : { 'x-api-token': secret };
    const response = await api(w.url, call.method, call.path, { headers, body: call.body });
    requests += 1;
    problems.push(...leaks(w, who, call, response, sentBefore));
    return response;
  };

  /**
   * Tenant B naming tenant A gets the very answer it gets naming a tenant that does
   * not exist: a key cannot learn which tenants exist.
   */
  const sameAsNobody = async (call: Call, answer: ApiResponse, index: number, mismatches: string[]): Promise<void> => {
    const nobody = (text: string): string => text.replaceAll(w.tenants.a.id, 'tenant-nobody');
    const probe = {
      ...call,
      path: nobody(call.path),
      body: call.body === undefined ? undefined : JSON.parse(nobody(JSON.stringify(call.body))),
    };
    const unknown = await send('b', probe, index);
    const same =
      unknown.status === answer.status && unknown.text.replaceAll('tenant-nobody', w.tenants.a.id) === answer.text;
    if (!same)
      mismatches.push(
        `b: ${call.method} ${call.path} answered ${answer.status} ${answer.text.slice(0, 200)}, for a tenant that does not exist ${unknown.status} ${unknown.text.slice(0, 200)}`,
      );
  };

  beforeAll(async () => {
    w = await startWorld(cleanups, { extraToml: '[http]\nauth_max_failures = 100000\n' });
  }, 60_000);
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    console.info(`security matrix: ${requests} requests scanned`);
  });

  it('has a probe for every route of the catalog, and no probe for a route it lacks', () => {
    const catalog = ROUTE_CATALOG.map(label);
    expect(
      catalog.filter((route) => PROBES[route] === undefined),
      'routes without a probe',
    ).toEqual([]);
    expect(
      Object.keys(PROBES).filter((route) => !catalog.includes(route)),
      'probes of no route',
    ).toEqual([]);
    expect(catalog.length).toBeGreaterThan(30);
  });

  it("answers each credential as the route documents, without ever handing one tenant the other's data", async () => {
    const mismatches: string[] = [];
    type Planned = { who: Credential; index: number; route: (typeof ROUTE_CATALOG)[number]; call: Call };
    /** Each route's call on tenant A's resources (scratch objects made now, before any snapshot). */
    const plan = async (who: Credential): Promise<Planned[]> => {
      const planned: Planned[] = [];
      for (const [index, route] of ROUTE_CATALOG.entries()) {
        const probe = PROBES[label(route)];
        if (probe !== undefined) planned.push({ who, index, route, call: await probe(w, 'a') });
      }
      return planned;
    };
    const run = async (planned: Planned[]): Promise<void> => {
      for (const { who, index, route, call } of planned) {
        const response = await send(who, call, index);
        const want = expected(label(route), route.access, who, Object.keys(route.responses).map(Number));
        if (!want.includes(response.status))
          mismatches.push(
            `${who}: ${label(route)} as ${call.method} ${call.path} answered ${response.status} (want ${want.join('/')}): ${response.text.slice(0, 200)}`,
          );
        if (who === 'b' && route.access === 'tenant') await sameAsNobody(call, response, index, mismatches);
      }
    };
    const refused: Planned[] = [];
    for (const who of ['none', 'wrong', 'expired', 'b'] as const) refused.push(...(await plan(who)));
    await quiesce(w);
    const before = await snapshot(w, 'a');
    // Nothing of these may change tenant A's data; its own key and the admin token come after the check.
    await run(refused);
    await quiesce(w);
    expect(await snapshot(w, 'a'), "tenant A after everyone else's attempts").toEqual(before);
    await run(await plan('a'));
    await run(await plan('admin'));
    expect(mismatches).toEqual([]);
    expect(problems).toEqual([]);
  }, 60_000);

  it("posted each tenant's delivery reports to its own endpoint only", () => {
    for (const owner of OWNERS) {
      const path = `/client-${owner}-`;
      const foreignIds = new Set(Object.values(w.tenants[other(owner)].messages));
      const items = w.s.client.reports.filter((report) => report.path.includes(path)).flatMap((report) => report.items);
      expect(items.length).toBeGreaterThan(0);
      expect(items.filter((item) => foreignIds.has(String(item.id)) || item.tenant_id !== w.tenants[owner].id)).toEqual(
        [],
      );
      const raw = w.s.client.reports
        .filter((report) => report.path.includes(path))
        .map((report) => report.raw)
        .join('\n');
      expect(w.tenants[other(owner)].markers.filter((marker) => raw.includes(marker))).toEqual([]);
    }
  });

  it.each([
    ['b', 'a'],
    ['a', 'b'],
  ] as const)(
    "tenant %s with tenant %s's ids, naming no tenant, finds and changes nothing of it",
    async (attacker: Owner, victim: Owner) => {
      await quiesce(w);
      const before = await snapshot(w, victim);
      let sentBefore = '';
      for (const [index, call] of implicitProbes(w, victim).entries()) {
        const response = await send(attacker, call, index, sentBefore);
        sentBefore += ` ${callText(call)}`;
        expect(response.status, `${call.method} ${call.path}: ${response.text.slice(0, 200)}`).toBeLessThan(500);
        // Searches by the victim's own words: the words come back in no message.
        if (Array.isArray(response.body?.messages))
          expect(
            response.body.messages
              .map((m: { tenant_id: string }) => m.tenant_id)
              .filter((id: string) => id !== w.tenants[attacker].id),
          ).toEqual([]);
      }
      await quiesce(w);
      expect(await snapshot(w, victim)).toEqual(before);
      expect(problems).toEqual([]);
    },
    60_000,
  );
});
