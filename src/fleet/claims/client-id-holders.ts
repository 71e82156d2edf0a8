/**
 * The round trips of fleet-wide idempotency: which of a request's client ids the fleet's claim log
 * gives to another node, and whether that node still has a message for each. A holder that does
 * not answer is taken to have them all: a message refused as a repeat is better than one sent twice.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import type { Clock } from '../../core/index.js';
import type { Principal } from '../../core/tenant/index.js';
import type { MessageQueue, SubmissionItem } from '../../core/message/index.js';
import { holderAnswerCodec, holderRequestCodec } from './claim-wire-schemas.js';
import type { FleetLink } from '../link/fleet-service.js';
import { claimKey, type ClientIdClaims } from './idempotency-claims.js';

/** Requests to the holder of a claim: outside `mailproxy.>`, which the event stream captures. */
export const holderSubject = (nodeId: string): string => `mailproxy_fleet_idem.${nodeId}.has`;

const ASK_TIMEOUT_MS = 2000;

/** An item of a request that the fleet's claims decide: its tenant, its client id and their claim key. */
export interface Claimable {
  item: SubmissionItem;
  tenantId: string;
  id: string;
  key: string;
}

/** The items with a client id this node does not have: ids it has are its own business, decided locally with no round trip. */
export function claimablesOf(
  principal: Principal,
  items: readonly SubmissionItem[],
  queue: Pick<MessageQueue, 'states'>,
): Claimable[] {
  const byTenant = new Map<string, Claimable[]>();
  for (const item of items) {
    const tenantId = principal.kind === 'tenant' ? principal.tenantId : item.tenantId;
    if (item.problem !== undefined || item.id === null || tenantId === undefined) continue;
    const entry = { item, tenantId, id: item.id, key: claimKey(tenantId, item.id) };
    const entries = byTenant.get(tenantId);
    if (entries === undefined) byTenant.set(tenantId, [entry]);
    else entries.push(entry);
  }
  return [...byTenant].flatMap(([tenantId, entries]) => {
    const known = queue.states(
      tenantId,
      entries.map((entry) => entry.id),
    );
    return entries.filter((entry) => !known.has(entry.id));
  });
}

/** Asks `node` which of the entries it has (or is committing); one that does not answer is taken to have them all. */
async function ask(nc: NatsConnection, node: string, asked: readonly Claimable[]): Promise<boolean[]> {
  const request = holderRequestCodec.encode({
    items: asked.map((entry) => ({ tenant_id: entry.tenantId, id: entry.id })),
  });
  const answer = await nc
    .request(holderSubject(node), request, { timeout: ASK_TIMEOUT_MS })
    .then((reply) => holderAnswerCodec.read(reply.data))
    .catch(() => null);
  return answer?.ok === true && answer.value.has.length === asked.length ? answer.value.has : asked.map(() => true);
}

export interface HolderCheckDeps {
  link: FleetLink;
  claims: ClientIdClaims;
  clock: Clock;
}

/**
 * The keys another node holds and still has a message for: the request's keys claimed in one
 * record, each other holder asked once for all of its keys, and those it has no message for
 * taken over in one record more.
 */
export function createHolderCheck({ link, claims, clock }: HolderCheckDeps) {
  /** Groups the claimed keys by their holder, leaving out this node's own. */
  const othersKeys = (holders: ReadonlyMap<string, string>, keys: Iterable<string>): Map<string, string[]> => {
    const byHolder = new Map<string, string[]>();
    for (const key of keys) {
      const holder = holders.get(key) ?? link.nodeId;
      if (holder === link.nodeId) continue;
      const held = byHolder.get(holder);
      if (held === undefined) byHolder.set(holder, [key]);
      else held.push(key);
    }
    return byHolder;
  };

  return async (nc: NatsConnection, entries: ReadonlyMap<string, Claimable>): Promise<Set<string>> => {
    const holders = await claims.claim([...entries.keys()], clock.now());
    const held = new Set<string>();
    await Promise.all(
      [...othersKeys(holders, entries.keys())].map(async ([holder, keys]) => {
        const has = await ask(
          nc,
          holder,
          keys.map((key) => entries.get(key) as Claimable),
        );
        const free = keys.filter((key, at) => {
          if (has[at] === true) held.add(key);
          return has[at] !== true;
        });
        if (free.length === 0) return;
        const taken = await claims.takeOver(holder, free, clock.now());
        for (const key of free) if (!taken.has(key)) held.add(key);
      }),
    );
    return held;
  };
}
