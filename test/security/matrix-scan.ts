/**
 * What a response to one caller may not hold: another tenant's data. A string
 * the caller itself sent (an id it named in the path or body) is not a leak
 * when it comes back; anything else of the other tenant is.
 */
import { vi } from 'vitest';
import type { ApiResponse } from '../helpers/test-daemon.js';
import type { Call } from './route-probes.js';
import type { Owner, World } from './matrix-world.js';

export type Credential = 'none' | 'wrong' | 'expired' | 'admin' | Owner;

/** Public routes that serve the API's documentation (static, the same to every caller). */
const DOCUMENTATION = new Set(['/openapi.json', '/docs']);

/** Every `tenant_id` value anywhere in a JSON value. */
function tenantIds(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) tenantIds(item, found);
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'tenant_id' && typeof inner === 'string') found.push(inner);
      else tenantIds(inner, found);
    }
  }
  return found;
}

/** The call as text: what the caller itself said. */
export const callText = (call: Call): string =>
  `${decodeURIComponent(call.path)} ${call.body === undefined ? '' : JSON.stringify(call.body)}`;

/**
 * The problems of one response (empty: clean). `sentBefore`: what the caller sent earlier
 * in a sequence that may create same-named objects of its own (an account it calls `acct-a`).
 */
export function leaks(w: World, who: Credential, call: Call, response: ApiResponse, sentBefore = ''): string[] {
  if (who === 'admin') return [];
  const sent = `${sentBefore} ${callText(call)}`;
  const foreign = who === 'a' ? ['b'] : who === 'b' ? ['a'] : ['a', 'b'];
  const markers = [w.unmatchedMarker, ...foreign.flatMap((owner) => w.tenants[owner as Owner].markers)];
  const label = `${who}: ${call.method} ${call.path}`;
  const problems = markers
    .filter((marker) => !sent.includes(marker) && response.text.includes(marker))
    .map((marker) => `${label} answered "${marker}"`);
  const own = who === 'a' || who === 'b' ? w.tenants[who].id : null;
  // The API's documentation is the same for everyone, and its examples name a tenant (`acme`):
  // those are the document's, not any tenant's data. The markers above are still looked for in it.
  if (DOCUMENTATION.has(call.path)) return problems;
  for (const id of tenantIds(response.body)) {
    if (id !== own && !sent.includes(id)) problems.push(`${label} answered tenant_id "${id}"`);
  }
  return problems;
}

/** Until the dispatcher and the report loop have nothing left to do: snapshots taken then stay put. */
export async function quiesce(w: World): Promise<void> {
  await w.s.fx.settle();
  await vi.waitFor(
    async () => {
      const all = (await w.admin('GET', '/tenants/sync-status')).body.tenants as Array<{
        tenant_id: string;
        backlog: number;
        in_flight: boolean;
      }>;
      const ours = new Set([w.tenants.a.id, w.tenants.b.id]);
      const busy = all.filter((status) => ours.has(status.tenant_id) && (status.backlog > 0 || status.in_flight));
      if (busy.length > 0) throw new Error(`reports not caught up: ${JSON.stringify(busy)}`);
    },
    { timeout: 15_000, interval: 50 },
  );
}
