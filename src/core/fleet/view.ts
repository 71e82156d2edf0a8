/**
 * One view of the fleet's messages: each node keeps its own queue,
 * so a search asks every node for a page and merges them, and the cursor keeps
 * each node's position so that the next page has no gaps and no duplicates.
 * A node that does not answer is named, never silently left out. Pure: the
 * adapter in src/fleet/ asks the nodes over NATS request/reply.
 */
import type { EventOutcome, ProviderEvent } from '../provider/events.js';
import { AppError } from '../app-error.js';
import type { MessageCommands } from '../message/commands.js';
import type { ErasureRequest } from '../message/erase-command.js';
import type { MessageRead } from '../message/message-read.js';
import type { MessageCursor, MessageOrder, MessageQuery, MessageSearch, MessageSummary } from '../message/search.js';
import { nodeQueue, type FleetQueues, type NodeQueue } from './queues.js';
import type { QueueStatusStore } from '../message/queue-status.js';
import type { CommandContext } from '../tenant/tenant-service.js';

/** Where a node's part of a fleet-wide listing stands. */
export type NodePosition = { after: MessageCursor | null; skip: number } | 'done';

/** The fleet cursor: every node's position (a node not named starts from its beginning). */
export interface FleetCursor {
  order: MessageOrder;
  nodes: Record<string, NodePosition>;
}

/** One node's answer to a page request: its messages in its order, and whether more follow. */
export interface NodePage {
  nodeId: string;
  messages: MessageSummary[];
  next: MessageCursor | null;
}

/** A message of the fleet's page: `nodeId` is the node that holds it. */
export type FleetSummary = MessageSummary & { nodeId: string };

export interface FleetPage {
  messages: FleetSummary[];
  cursor: FleetCursor | null;
}

/** What a node is asked for: a page from its position, `skip` messages past `after` first. */
export const pageRequest = (
  position: NodePosition | undefined,
  limit: number,
): { after: MessageCursor | null; limit: number; skip: number } => {
  const at = position === undefined || position === 'done' ? { after: null, skip: 0 } : position;
  return { after: at.after, skip: at.skip, limit: limit + at.skip };
};

const wholeSecond = (at: number | null): number => (at === null ? Number.MAX_SAFE_INTEGER : Math.floor(at / 1000));

/**
 * Merge order: newest first (created, then node and pk), or soonest next attempt first.
 * Instants compare in whole seconds, the grain a client sees them in: within one second
 * the node and pk decide, so the order is the one the listed times show.
 */
function before(order: MessageOrder, a: FleetSummary, b: FleetSummary): boolean {
  if (order === 'next_attempt') {
    const x = wholeSecond(a.nextAttemptAt);
    const y = wholeSecond(b.nextAttemptAt);
    if (x !== y) return x < y;
  } else if (wholeSecond(a.createdAt) !== wholeSecond(b.createdAt))
    return wholeSecond(a.createdAt) > wholeSecond(b.createdAt);
  if (a.nodeId !== b.nodeId) return a.nodeId < b.nodeId;
  return order === 'next_attempt' ? a.pk < b.pk : a.pk > b.pk;
}

/**
 * Where a node stands after `taken` of its page were used. Newest first the
 * pk alone is the position; by next attempt the store's cursor is exact only
 * at its page's end, so a partly used page is remembered as a count past the
 * previous position.
 */
function advance(order: MessageOrder, previous: NodePosition | undefined, page: NodePage, taken: number): NodePosition {
  const from = previous === undefined || previous === 'done' ? { after: null, skip: 0 } : previous;
  if (taken === page.messages.length && page.next === null) return 'done';
  if (taken === 0) return from;
  if (order === 'newest') return { after: { pk: page.messages[taken - 1]!.pk }, skip: 0 };
  if (taken === page.messages.length) return { after: page.next, skip: 0 };
  return { after: from.after, skip: from.skip + taken };
}

/**
 * Merges the nodes' pages into one page of at most `limit`, each node's
 * messages kept in its own order (a k-way merge), so whatever the order of
 * ties across nodes, each node's sequence is walked once. Nodes that did not
 * answer keep their position: a later page picks them up. The cursor is null
 * once every answering node is done.
 */
export function mergePages(
  order: MessageOrder,
  cursor: FleetCursor | null,
  pages: NodePage[],
  limit: number,
): FleetPage {
  const heads = pages.map((page) => ({
    page,
    taken: 0,
    items: page.messages.map((message) => ({ ...message, nodeId: page.nodeId })),
  }));
  const merged: FleetSummary[] = [];
  while (merged.length < limit) {
    let best: (typeof heads)[number] | null = null;
    for (const head of heads) {
      const candidate = head.items[head.taken];
      if (candidate !== undefined && (best === null || before(order, candidate, best.items[best.taken]!))) best = head;
    }
    if (best === null) break;
    merged.push(best.items[best.taken]!);
    best.taken += 1;
  }
  const nodes: Record<string, NodePosition> = { ...(cursor?.nodes ?? {}) };
  for (const head of heads)
    nodes[head.page.nodeId] = advance(order, cursor?.nodes[head.page.nodeId], head.page, head.taken);
  const open = heads.some((head) => nodes[head.page.nodeId] !== 'done');
  return { messages: merged, cursor: open ? { order, nodes } : null };
}

/** A node's share of the fleet: the ones asked, and the ones named missing (known but silent or not alive). */
export interface FleetReach {
  missingNodes: string[];
}

/**
 * The fleet-wide message reads and commands the API offers in fleet mode
 * (null in single-node mode, where the routes use the local use-cases alone).
 * The asking node has scoped the tenant before it asks; the principal travels
 * with the request so that each node applies the same rules again.
 */
export interface FleetMessages {
  search(
    ctx: CommandContext,
    query: Omit<MessageQuery, 'after'>,
    cursor: string | undefined,
  ): Promise<FleetReach & { messages: FleetSummary[]; nextCursor: string | null }>;
  detail(
    ctx: CommandContext,
    tenantId: string | undefined,
    id: string,
  ): Promise<FleetReach & { nodeId: string; detail: MessageRead }>;
  /**
   * Runs a per-tenant command on every node (local included) and merges the outcomes: the command's
   * answer as a single node gives it, with `nodes` and `missing_nodes` (the command inbox stores it as is).
   */
  command(
    ctx: CommandContext,
    name: FleetCommandName,
    params: Record<string, unknown>,
  ): Promise<Record<string, unknown>>;
  /** Each node's waiting messages and the fleet's total (GET /status, /metrics). */
  queues(): Promise<FleetQueues>;
  /**
   * Verified provider events that no message of this node matched, applied by the other
   * nodes to the messages they hold: one outcome per event, `applied` or `duplicate` where a node
   * held it. Throws FLEET_UNAVAILABLE when an event no node matched may be on a node not reached.
   */
  providerEvents(tenantId: string, events: readonly ProviderEvent[]): Promise<EventOutcome[]>;
}

/**
 * The commands that reach the node holding each message. Suspend and activate are not among them:
 * suspensions are shared configuration, replicated to every node through the configuration bucket.
 */
export type FleetCommandName = 'delete' | 'resend' | 'erase';

/** Id lists of each command's answer: merged as a union across nodes, `not_found` as the ids no node found. */
export const COMMAND_ID_LISTS: Record<Exclude<FleetCommandName, 'erase'>, { found: string[] }> = {
  delete: { found: ['deleted', 'in_flight'] },
  resend: { found: ['resent', 'not_final', 'body_erased'] },
};

/**
 * An erasure's answers summed across nodes: each node erased what it holds. An id is not found when
 * no node found it; the tenants are those any node erased in.
 */
function mergeErasures(values: Array<Record<string, unknown>>): Record<string, unknown> {
  const merged: Record<string, unknown> = values.length > 0 ? { ...values[0] } : {};
  for (const [key, value] of Object.entries(merged)) {
    if (typeof value === 'number')
      merged[key] = values.reduce((total, answer) => total + (typeof answer[key] === 'number' ? answer[key] : 0), 0);
  }
  const lists = (key: string) => values.map((answer) => (Array.isArray(answer[key]) ? (answer[key] as string[]) : []));
  merged.tenants = [...new Set(lists('tenants').flat())];
  merged.not_found = lists('not_found').reduce((left, right) => left.filter((id) => right.includes(id)));
  return merged;
}

/**
 * An erasure's parameters as they cross to other nodes: its ids under `erase_ids`, not `ids`, so
 * that a node of an earlier version, which read any command it did not know as a resend of `ids`,
 * finds nothing to resend.
 */
export function erasureParams(request: ErasureRequest): Record<string, unknown> {
  const base = { tenant_id: request.tenantId };
  if (request.by === 'messages') return { ...base, erase_ids: request.ids };
  return request.by === 'address' ? { ...base, address: request.address } : { ...base, whole_tenant: true };
}

/** Merges per-node answers of one command into the single-node answer's shape, plus `nodes` and `missing_nodes`. */
export function mergeCommandOutcomes(
  name: FleetCommandName,
  answers: Record<string, Record<string, unknown>>,
  ids: readonly string[],
): Record<string, unknown> {
  const values = Object.values(answers);
  if (name === 'erase') return mergeErasures(values);
  const spec = COMMAND_ID_LISTS[name];
  const merged: Record<string, unknown> = values.length > 0 ? { ...values[0] } : {};
  const found = new Set<string>();
  for (const list of spec.found) {
    const union = [
      ...new Set(values.flatMap((answer) => (Array.isArray(answer[list]) ? (answer[list] as string[]) : []))),
    ];
    merged[list] = union;
    union.forEach((id) => found.add(id));
  }
  if (spec.found.length > 0) merged.not_found = ids.filter((id) => !found.has(id));
  return merged;
}

/** The use-cases a node answers with, the same the API calls (so each node applies the same access rules). */
export interface LocalMessages {
  page(query: MessageQuery, skip: number): { messages: MessageSummary[]; next: MessageCursor | null };
  detail(ctx: CommandContext, tenantId: string | undefined, id: string): MessageRead;
  command(ctx: CommandContext, name: FleetCommandName, params: Record<string, unknown>): Record<string, unknown>;
  queue(): NodeQueue;
}

/**
 * The local use-cases over the search and the message commands. Their answers are the core's read
 * models (plain JSON), which the asking node's edge words as it words its own.
 */
export function localMessages(
  search: MessageSearch,
  commands: MessageCommands,
  queue: Pick<QueueStatusStore, 'counts'>,
): LocalMessages {
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  const ids = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((id): id is string => typeof id === 'string') : [];
  return {
    queue: () => nodeQueue(queue.counts(null)),
    page(query, skip) {
      const found = search.find(query);
      return { messages: found.messages.slice(skip), next: found.next };
    },
    detail: (ctx, tenantId, id) => commands.detail(ctx, tenantId, id),
    command(ctx, name, params) {
      const tenantId = text(params.tenant_id);
      if (name === 'delete') return commands.deleteMessages(ctx, tenantId, ids(params.ids));
      if (name === 'resend') return commands.resend(ctx, tenantId, ids(params.ids));
      if (name !== 'erase') throw new AppError('VALIDATION_FAILED', `unknown fleet command ${String(name)}`);
      const address = text(params.address);
      if (Array.isArray(params.erase_ids))
        return { ...commands.erase(ctx, { by: 'messages', tenantId, ids: ids(params.erase_ids) }) };
      if (address !== undefined) return { ...commands.erase(ctx, { by: 'address', tenantId, address }) };
      if (params.whole_tenant === true) return { ...commands.erase(ctx, { by: 'tenant', tenantId }) };
      throw new AppError('VALIDATION_FAILED', 'an erasure names ids, an address or the whole tenant');
    },
  };
}
