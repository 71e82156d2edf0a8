/**
 * Answers the fleet's questions about this node's messages: a page of a
 * search, one message's detail, a command, an offloaded file's record and its
 * downloads (fleet-files.ts). A thin adapter over the same local
 * use-cases the API calls, with the asker's principal, so the access rules are
 * applied again here. Subscribed once the node has joined the cluster.
 */
import type { Subscription } from '@nats-io/nats-core';
import type { CommandContext } from '../../core/tenant/index.js';
import type { FleetCommandName, LocalMessages } from '../../core/fleet/index.js';
import type { Logger } from '../../core/index.js';
import type { EventOutcome, ProviderEvent } from '../../core/provider/index.js';
import type { MessageQuery } from '../../core/message/index.js';
import type { Service } from '../../runtime/index.js';
import type { FleetLink } from '../link/fleet-service.js';
import { fileToWire, type LocalFiles } from './fleet-files.js';
import { decode, encode, replyOf, replyOfAsync, VIEW_PREFIX, type ViewKind } from './view-protocol.js';
import { detailToWire, summaryToWire } from './view-wire.js';

interface Request {
  /** The asker's principal (absent for the queue counts, which are the admin's alone at the asking node). */
  ctx?: CommandContext;
  query?: MessageQuery;
  skip?: number;
  tenant_id?: string;
  id?: string;
  name?: FleetCommandName;
  params?: Record<string, unknown>;
  events?: ProviderEvent[];
  file_id?: string;
  at?: number;
}

export function createViewResponder(deps: {
  link: FleetLink;
  local: LocalMessages;
  /** The offloaded files of the messages this node sent. */
  files: LocalFiles;
  /** Provider events another node verified, applied to the messages held here. */
  providerEvents: (tenantId: string, events: readonly ProviderEvent[]) => Promise<EventOutcome[]>;
  log: Logger;
}): Service {
  const { link, local, log } = deps;
  let subscription: Subscription | null = null;
  let stopped = false;

  const answer = (kind: ViewKind, request: Request): unknown => {
    if (kind === 'queue') return local.queue();
    if (kind === 'file') return fileToWire(deps.files.find(request.file_id ?? ''));
    if (kind === 'file-downloaded') {
      deps.files.downloaded(request.file_id ?? '', request.at ?? 0);
      return null;
    }
    if (kind === 'page') {
      const page = local.page(request.query!, request.skip ?? 0);
      return { messages: page.messages.map(summaryToWire), next: page.next };
    }
    const ctx: CommandContext = {
      principal: request.ctx!.principal,
      correlationId: request.ctx!.correlationId ?? null,
    };
    if (kind === 'detail') return detailToWire(local.detail(ctx, request.tenant_id, request.id ?? ''));
    return local.command(ctx, request.name!, request.params ?? {});
  };

  return {
    name: 'fleet-view',
    start() {
      void link.joined().then((nc) => {
        if (stopped) return;
        subscription = nc.subscribe(`${VIEW_PREFIX}.${link.nodeId}.*`, {
          callback: (error, msg) => {
            if (error !== null) return log.warn({ err: error }, 'fleet view subscription failed');
            const kind = msg.subject.slice(msg.subject.lastIndexOf('.') + 1) as ViewKind;
            if (kind === 'provider') {
              const request = decode(msg.data) as Request;
              void replyOfAsync(() => deps.providerEvents(request.tenant_id ?? '', request.events ?? [])).then(
                (reply) => msg.respond(encode(reply)),
              );
              return;
            }
            const reply = replyOf(() => answer(kind, decode(msg.data) as Request));
            // An AppError is the asker's to show; anything else is a bug here, logged where it happened.
            if ('error' in reply && reply.error.code === 'INTERNAL')
              log.error({ kind, subject: msg.subject }, 'fleet view request failed');
            msg.respond(encode(reply));
          },
        });
      });
      return Promise.resolve();
    },
    stop() {
      stopped = true;
      subscription?.unsubscribe();
      return Promise.resolve();
    },
  };
}
