/**
 * The fleet's one view (issue 24): the responder that answers other nodes
 * about this node's messages, and the fleet-wide reads and commands the API
 * uses. Nothing at all in single-node mode. Composition only.
 */
import { localMessages, type FleetMessages } from '../core/fleet-view.js';
import type { Logger } from '../core/logger.js';
import type { MessageCommands } from '../core/message-commands.js';
import type { MessageSearch } from '../core/message-search.js';
import type { EventOutcome, ProviderEvent } from '../core/provider-events.js';
import type { QueueStatusStore } from '../core/queue-status.js';
import { createFleetMessages } from '../fleet/fleet-messages.js';
import type { FleetService } from '../fleet/fleet-service.js';
import { createViewResponder } from '../fleet/view-responder.js';
import type { Service } from '../runtime/service.js';

export interface FleetViewParts {
  messages: FleetMessages;
  responder: Service;
}

export function createFleetView(
  fleet: FleetService | null,
  deps: {
    search: MessageSearch;
    commands: MessageCommands;
    queue: QueueStatusStore;
    providerEvents: (tenantId: string, events: readonly ProviderEvent[]) => Promise<EventOutcome[]>;
    log: Logger;
  },
): FleetViewParts | null {
  if (fleet === null) return null;
  const local = localMessages(deps.search, deps.commands, deps.queue);
  const log = deps.log.child({ component: 'fleet-view' });
  return {
    messages: createFleetMessages({ link: fleet.link, known: () => fleet.status().nodes.map((node) => node.node_id), local, log }),
    responder: createViewResponder({ link: fleet.link, local, providerEvents: deps.providerEvents, log }),
  };
}
