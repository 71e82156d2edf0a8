/**
 * What a processed command leaves behind: its inbox row (a second delivery is then a duplicate) and
 * its audit entry, mirrored as `command.processed`. Written inside the caller's transaction.
 */
import { changeRecorder, type CommandRequest, type InboxStore } from '../../core/events/index.js';
import type { Clock, IdSource, ChangeLog } from '../../core/index.js';

export interface CommandRecordDeps {
  store: { inbox: InboxStore; changes: ChangeLog };
  clock: Clock;
  ids: IdSource;
}

export type CommandRecord = (request: CommandRequest, outcome: Record<string, unknown>) => void;

export function commandRecord(deps: CommandRecordDeps): CommandRecord {
  const { store, clock } = deps;
  return (request, outcome) => {
    const receivedAt = clock.now();
    store.inbox.record({
      id: request.inboxId,
      subject: request.subject,
      tenantId: request.tenantId,
      command: request.command,
      receivedAt,
      outcome,
    });
    const record = changeRecorder(
      { principal: { kind: 'tenant', tenantId: request.tenantId }, correlationId: request.inboxId },
      { now: () => receivedAt, uuid: () => deps.ids.uuid() },
    );
    store.changes.record(
      record({
        command: `nats.${request.command}`,
        eventType: 'command.processed',
        tenantId: request.tenantId,
        aggregateType: 'message',
        aggregateId: request.tenantId,
        data: { command: request.command, inbox_id: request.inboxId, subject: request.subject, outcome },
      }),
    );
  };
}
