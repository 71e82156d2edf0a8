/**
 * The API's message reads and commands across the fleet: this node answers
 * from its own queue, every other live node is asked over request/reply with
 * a deadline, and the answers are merged. Every node the membership knows is
 * accounted for: one not alive, or not answering in time, is named in
 * `missing_nodes`, never silently left out.
 */
import { AppError, isAppError } from '../core/app-error.js';
import {
  mergeCommandOutcomes,
  mergePages,
  pageRequest,
  type FleetCommandName,
  type FleetMessages,
  type LocalMessages,
  type NodePage,
} from '../core/fleet-view.js';
import { fleetQueues, type NodeQueue } from '../core/fleet-queues.js';
import type { Logger } from '../core/logger.js';
import type { EventOutcome } from '../core/provider-events.js';
import type { CommandContext } from '../core/tenant-service.js';
import { decodeFleetCursor, encodeFleetCursor } from './fleet-cursor.js';
import type { FleetLink } from './fleet-service.js';
import { decode, encode, valueOf, viewSubject, type ViewKind, type ViewReply } from './view-protocol.js';

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

type Answer = { node: string; reply: ViewReply } | { node: string; missing: true };

export function createFleetMessages(deps: FleetMessagesDeps): FleetMessages {
  const { link, local, log } = deps;
  const self = link.nodeId;
  const deadlineMs = deps.deadlineMs ?? ASK_DEADLINE_MS;

  /** The other nodes to ask, and the known ones not alive (missing without asking). */
  const reach = (): { others: string[]; absent: string[] } => {
    const alive = link.connection() === null ? [self] : link.aliveNodes();
    const known = [...new Set([...deps.known(), ...alive])].sort();
    return { others: alive.filter((node) => node !== self), absent: known.filter((node) => !alive.includes(node)) };
  };

  const ask = async (node: string, kind: ViewKind, payload: unknown): Promise<Answer> => {
    const nc = link.connection();
    if (nc === null) return { node, missing: true };
    try {
      const msg = await nc.request(viewSubject(node, kind), encode(payload), { timeout: deadlineMs });
      return { node, reply: decode(msg.data) as ViewReply };
    } catch (error) {
      log.warn({ node, kind, err: error }, 'fleet node did not answer');
      return { node, missing: true };
    }
  };

  const locally = (run: () => unknown): ViewReply => {
    try {
      return { ok: run() };
    } catch (error) {
      if (isAppError(error)) return { error: { code: error.code, message: error.message, details: error.details } };
      throw error;
    }
  };

  const wire = (ctx: CommandContext) => ({ principal: ctx.principal, correlationId: ctx.correlationId });
  const missingOf = (answers: Answer[], absent: string[]): string[] =>
    [...absent, ...answers.filter((answer) => 'missing' in answer).map((answer) => answer.node)].sort();

  return {
    async search(ctx, query, cursorText) {
      const cursor = cursorText === undefined ? null : decodeFleetCursor(cursorText, query.order);
      const { others, absent } = reach();
      const open = (node: string): boolean => cursor?.nodes[node] !== 'done';
      const requestOf = (node: string) => pageRequest(cursor?.nodes[node], query.limit);
      const pages: NodePage[] = [];
      if (open(self)) {
        const { after, limit, skip } = requestOf(self);
        pages.push({ node_id: self, ...local.page({ ...query, after, limit }, skip) });
      }
      const answers = await Promise.all(
        others.filter(open).map((node) => {
          const { after, limit, skip } = requestOf(node);
          return ask(node, 'page', { ctx: wire(ctx), query: { ...query, after, limit }, skip });
        }),
      );
      const failed: string[] = [];
      for (const answer of answers) {
        if ('missing' in answer) continue;
        if ('error' in answer.reply) failed.push(answer.node);
        else pages.push({ node_id: answer.node, ...(answer.reply.ok as Omit<NodePage, 'node_id'>) });
      }
      const merged = mergePages(query.order, cursor, pages, query.limit);
      return {
        messages: merged.messages,
        next_cursor: merged.cursor === null ? null : encodeFleetCursor(merged.cursor),
        missing_nodes: [...missingOf(answers, absent), ...failed].sort(),
      };
    },

    async detail(ctx, tenantId, id) {
      const here = locally(() => local.detail(ctx, tenantId, id));
      const { others, absent } = reach();
      if ('ok' in here || here.error.code !== 'NOT_FOUND') return { node_id: self, detail: valueOf(here) as Record<string, unknown>, missing_nodes: absent };
      const answers = await Promise.all(others.map((node) => ask(node, 'detail', { ctx: wire(ctx), tenant_id: tenantId, id })));
      const missing_nodes = missingOf(answers, absent);
      const hit = answers.find((answer) => 'reply' in answer && 'ok' in answer.reply);
      if (hit !== undefined && 'reply' in hit) return { node_id: hit.node, detail: valueOf(hit.reply) as Record<string, unknown>, missing_nodes };
      throw new AppError('NOT_FOUND', 'message not found', { details: { message: id, missing_nodes } });
    },

    async command(ctx, name: FleetCommandName, params) {
      const { others, absent } = reach();
      const here = locally(() => local.command(ctx, name, params));
      const answers = await Promise.all(others.map((node) => ask(node, 'command', { ctx: wire(ctx), name, params })));
      const replies: Record<string, ViewReply> = { [self]: here };
      for (const answer of answers) if ('reply' in answer) replies[answer.node] = answer.reply;
      const done = Object.fromEntries(Object.entries(replies).flatMap(([node, reply]) => ('ok' in reply ? [[node, reply.ok as Record<string, unknown>]] : [])));
      // No node could run it (a bad tenant, a tenant key naming another tenant): the error is the answer.
      if (Object.keys(done).length === 0) valueOf(here);
      const ids = Array.isArray(params.ids) ? (params.ids as string[]) : [];
      const nodes = Object.fromEntries(Object.entries(replies).map(([node, reply]) => [node, 'ok' in reply ? reply.ok : reply]));
      return { ...mergeCommandOutcomes(name, done, ids), nodes, missing_nodes: missingOf(answers, absent) };
    },

    async providerEvents(tenantId, events) {
      const { others, absent } = reach();
      const answers = await Promise.all(others.map((node) => ask(node, 'provider', { tenant_id: tenantId, events })));
      const outcomes = answers.flatMap((answer) => ('reply' in answer && 'ok' in answer.reply ? [answer.reply.ok as EventOutcome[]] : []));
      const unreached = [...absent, ...answers.filter((answer) => !('reply' in answer && 'ok' in answer.reply)).map((answer) => answer.node)];
      return events.map((_, index) => {
        const here = outcomes.map((list) => list[index]);
        if (here.includes('applied')) return 'applied';
        if (here.includes('duplicate')) return 'duplicate';
        // Matched nowhere that answered: unmatched only if every node answered.
        if (unreached.length > 0)
          throw new AppError('FLEET_UNAVAILABLE', 'a fleet node that may hold the message did not answer', { details: { missing_nodes: unreached.sort() } });
        return 'unmatched';
      });
    },

    async queues() {
      const { others, absent } = reach();
      const answers = await Promise.all(others.map((node) => ask(node, 'queue', {})));
      const nodes: Record<string, NodeQueue> = { [self]: local.queue() };
      for (const answer of answers) if ('reply' in answer && 'ok' in answer.reply) nodes[answer.node] = answer.reply.ok as NodeQueue;
      return fleetQueues(nodes, [...absent, ...others.filter((node) => nodes[node] === undefined)].sort());
    },
  };
}
