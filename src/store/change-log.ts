/** Writes the audit entry and the outbox event of an admin change (inside the caller's transaction). */
import type { ChangeLog } from '../core/index.js';
import type { SqliteDatabase } from './database.js';
import type { OutboxListener } from './message-event-writer.js';

export function createSqliteChangeLog(db: SqliteDatabase, listener: OutboxListener = () => {}): ChangeLog {
  const audit =
    db.prepare(`INSERT INTO command_log (occurred_at, actor, command, tenant_id, target, params, correlation_id, node_id)
    VALUES (@occurred_at, @actor, @command, @tenant_id, @target, @params, @correlation_id, @node_id)`);
  const outbox = db.prepare(`INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, event_version,
      tenant_id, payload, occurred_at, correlation_id)
    VALUES (@id, @aggregate_type, @aggregate_id, @event_type, @event_version, @tenant_id, @payload, @occurred_at, @correlation_id)`);

  return {
    record(change) {
      const data = JSON.stringify(change.data);
      audit.run({
        occurred_at: change.occurredAt,
        actor: change.actor,
        command: change.command,
        tenant_id: change.tenantId,
        target: change.aggregateId,
        params: data,
        correlation_id: change.correlationId,
        node_id: change.node ?? null,
      });
      if (change.auditOnly === true) return;
      outbox.run({
        id: change.eventId,
        aggregate_type: change.aggregateType,
        aggregate_id: change.aggregateId,
        event_type: change.eventType,
        event_version: change.eventVersion,
        tenant_id: change.tenantId,
        payload: data,
        occurred_at: change.occurredAt,
        correlation_id: change.correlationId,
      });
      listener(change.tenantId, change.eventType);
    },
  };
}
