/**
 * How the fleet's one view reaches the other nodes: which to ask (the live ones) and which to name
 * missing without asking (known, not alive), and one request/reply to a node with a deadline. A
 * node that does not answer in time, or answers with what is not a reply, is named missing.
 */
import { isAppError, type Logger } from '../../core/index.js';
import type { CommandContext } from '../../core/tenant/index.js';
import type { FleetLink } from './fleet-service.js';
import { encode, viewSubject, type ViewKind, type ViewReply } from '../view/view-protocol.js';
import { viewReplyCodec } from '../view/view-wire-schemas.js';

export type Answer = { node: string; reply: ViewReply } | { node: string; missing: true };

export interface FleetAskerDeps {
  link: FleetLink;
  /** Every node the membership knows of (alive or not). */
  known(): string[];
  log: Logger;
  deadlineMs: number;
}

export interface FleetAsker {
  /** The other nodes to ask, and the known ones not alive (missing without asking). */
  reach(): { others: string[]; absent: string[] };
  ask(node: string, kind: ViewKind, payload: unknown): Promise<Answer>;
}

export function createFleetAsker({ link, known, log, deadlineMs }: FleetAskerDeps): FleetAsker {
  const self = link.nodeId;
  return {
    reach() {
      const alive = link.connection() === null ? [self] : link.aliveNodes();
      const everyone = [...new Set([...known(), ...alive])].sort();
      return {
        others: alive.filter((node) => node !== self),
        absent: everyone.filter((node) => !alive.includes(node)),
      };
    },
    async ask(node, kind, payload) {
      const nc = link.connection();
      if (nc === null) return { node, missing: true };
      try {
        const msg = await nc.request(viewSubject(node, kind), encode(payload), { timeout: deadlineMs });
        return { node, reply: viewReplyCodec.decode(msg.data) };
      } catch (error) {
        log.warn({ node, kind, err: error }, 'fleet node did not answer');
        return { node, missing: true };
      }
    },
  };
}

/** This node's own answer, as another node would have sent it: its AppError as data. */
export function locally(run: () => unknown): ViewReply {
  try {
    return { ok: run() };
  } catch (error) {
    if (isAppError(error)) return { error: { code: error.code, message: error.message, details: error.details } };
    throw error;
  }
}

/** What a request carries of the caller. */
export const wireContext = (ctx: CommandContext) => ({ principal: ctx.principal, correlationId: ctx.correlationId });

/** The nodes named missing: the absent ones and the ones that did not answer. */
export const missingOf = (answers: readonly Answer[], absent: readonly string[]): string[] =>
  [...absent, ...answers.filter((answer) => 'missing' in answer).map((answer) => answer.node)].sort();
