/**
 * The API's message reads and commands across the fleet: this node answers
 * from its own queue, every other live node is asked over request/reply with
 * a deadline, and the answers are merged. Every node the membership knows is
 * accounted for: one not alive, or not answering in time, is named in
 * `missing_nodes`, never silently left out.
 */
import { AppError, type Logger } from '../../core/index.js';
import {
  mergeCommandOutcomes,
  mergePages,
  pageRequest,
  type FleetCommandName,
  type FleetMessages,
  type LocalMessages,
  type NodePage,
  fleetQueues,
  type NodeQueue,
} from '../../core/fleet/index.js';
import type { MessageCursor, MessageQuery, MessageRead } from '../../core/message/index.js';
import type { EventOutcome, ProviderEvent } from '../../core/provider/index.js';
import type { CommandContext } from '../../core/tenant/index.js';
import {
  createFleetAsker,
  locally,
  missingOf,
  wireContext,
  type Answer,
  type FleetAsker,
} from '../link/fleet-asker.js';
import { decodeFleetCursor, encodeFleetCursor } from './fleet-cursor.js';
import type { FleetLink } from '../link/fleet-service.js';
import { valueOf, type ViewReply } from './view-protocol.js';
import { detailFromWire, summaryFromWire } from './view-wire.js';

/** How long a node is waited for: past it, it is named missing and the answer goes out without it. */
export const ASK_DEADLINE_MS = 2000;

export interface FleetMessagesDeps {
  link: FleetLink;
  /** Every node the membership knows of (alive or not). */
  known(): string[];
  local: LocalMessages;
  log: Logger;
  deadlineMs?: number;
}

export function createFleetMessages(deps: FleetMessagesDeps): FleetMessages {
  const { local } = deps;
  const self = deps.link.nodeId;
  const asker = createFleetAsker({
    link: deps.link,
    known: deps.known,
    log: deps.log,
    deadlineMs: deps.deadlineMs ?? ASK_DEADLINE_MS,
  });
  const { reach, ask } = asker;

  return {
    search: (ctx, query, cursorText) => searchFleet(asker, self, local, ctx, query, cursorText),

    async detail(ctx, tenantId, id) {
      const here = locally(() => local.detail(ctx, tenantId, id));
      const { others, absent } = reach();
      if ('ok' in here || here.error.code !== 'NOT_FOUND')
        return { nodeId: self, detail: valueOf(here) as MessageRead, missingNodes: absent };
      const answers = await Promise.all(
        others.map((node) => ask(node, 'detail', { ctx: wireContext(ctx), tenant_id: tenantId, id })),
      );
      const missingNodes = missingOf(answers, absent);
      const hit = answers.find((answer) => 'reply' in answer && 'ok' in answer.reply);
      if (hit !== undefined && 'reply' in hit)
        return {
          nodeId: hit.node,
          detail: detailFromWire(valueOf(hit.reply) as Record<string, unknown>),
          missingNodes,
        };
      throw new AppError('NOT_FOUND', 'message not found', { details: { message: id, missing_nodes: missingNodes } });
    },

    async command(ctx, name: FleetCommandName, params) {
      const { others, absent } = reach();
      const here = locally(() => local.command(ctx, name, params));
      const answers = await Promise.all(
        others.map((node) => ask(node, 'command', { ctx: wireContext(ctx), name, params })),
      );
      const replies: Record<string, ViewReply> = { [self]: here };
      for (const answer of answers) if ('reply' in answer) replies[answer.node] = answer.reply;
      const done = Object.fromEntries(
        Object.entries(replies).flatMap(([node, reply]) =>
          'ok' in reply ? [[node, reply.ok as Record<string, unknown>]] : [],
        ),
      );
      // No node could run it (a bad tenant, a tenant key naming another tenant): the error is the answer.
      if (Object.keys(done).length === 0) valueOf(here);
      const ids = Array.isArray(params.ids) ? (params.ids as string[]) : [];
      const nodes = Object.fromEntries(
        Object.entries(replies).map(([node, reply]) => [node, 'ok' in reply ? reply.ok : reply]),
      );
      return { ...mergeCommandOutcomes(name, done, ids), nodes, missing_nodes: missingOf(answers, absent) };
    },

    async providerEvents(tenantId, events) {
      const { others, absent } = reach();
      const answers = await Promise.all(others.map((node) => ask(node, 'provider', { tenant_id: tenantId, events })));
      return providerOutcomes(events, answers, absent);
    },

    async queues() {
      const { others, absent } = reach();
      const answers = await Promise.all(others.map((node) => ask(node, 'queue', {})));
      const nodes: Record<string, NodeQueue> = { [self]: local.queue() };
      for (const answer of answers)
        if ('reply' in answer && 'ok' in answer.reply) nodes[answer.node] = answer.reply.ok as NodeQueue;
      return fleetQueues(nodes, [...absent, ...others.filter((node) => nodes[node] === undefined)].sort());
    },
  };
}

/** One page of the fleet: this node's and each other open node's page, merged; a node that failed is named missing. */
async function searchFleet(
  { reach, ask }: FleetAsker,
  self: string,
  local: LocalMessages,
  ctx: CommandContext,
  query: Omit<MessageQuery, 'after'>,
  cursorText: string | undefined,
): ReturnType<FleetMessages['search']> {
  const cursor = cursorText === undefined ? null : decodeFleetCursor(cursorText, query.order);
  const { others, absent } = reach();
  const open = (node: string): boolean => cursor?.nodes[node] !== 'done';
  const requestOf = (node: string) => pageRequest(cursor?.nodes[node], query.limit);
  const pages: NodePage[] = [];
  if (open(self)) {
    const { after, limit, skip } = requestOf(self);
    pages.push({ nodeId: self, ...local.page({ ...query, after, limit }, skip) });
  }
  const answers = await Promise.all(
    others.filter(open).map((node) => {
      const { after, limit, skip } = requestOf(node);
      return ask(node, 'page', { ctx: wireContext(ctx), query: { ...query, after, limit }, skip });
    }),
  );
  const failed: string[] = [];
  for (const answer of answers) {
    if ('missing' in answer) continue;
    if ('error' in answer.reply) failed.push(answer.node);
    else pages.push(pageFromWire(answer.node, answer.reply.ok as WirePage));
  }
  const merged = mergePages(query.order, cursor, pages, query.limit);
  return {
    messages: merged.messages,
    nextCursor: merged.cursor === null ? null : encodeFleetCursor(merged.cursor),
    missingNodes: [...missingOf(answers, absent), ...failed].sort(),
  };
}

/** Another node's page, as it crossed (view-wire.ts). */
interface WirePage {
  messages: Record<string, unknown>[];
  next: MessageCursor | null;
}
const pageFromWire = (node: string, page: WirePage): NodePage => ({
  nodeId: node,
  messages: page.messages.map(summaryFromWire),
  next: page.next,
});

/** Each event's outcome across the nodes that answered; one matched nowhere is unmatched only if every node answered. */
function providerOutcomes(
  events: readonly ProviderEvent[],
  answers: readonly Answer[],
  absent: readonly string[],
): EventOutcome[] {
  const outcomes = answers.flatMap((answer) =>
    'reply' in answer && 'ok' in answer.reply ? [answer.reply.ok as EventOutcome[]] : [],
  );
  const unreached = [
    ...absent,
    ...answers.filter((answer) => !('reply' in answer && 'ok' in answer.reply)).map((answer) => answer.node),
  ];
  return events.map((_, index) => {
    const here = outcomes.map((list) => list[index]);
    if (here.includes('applied')) return 'applied';
    if (here.includes('duplicate')) return 'duplicate';
    // Matched nowhere that answered: unmatched only if every node answered.
    if (unreached.length > 0)
      throw new AppError('FLEET_UNAVAILABLE', 'a fleet node that may hold the message did not answer', {
        details: { missing_nodes: unreached.sort() },
      });
    return 'unmatched';
  });
}
