/**
 * A change record pairs the audit entry of an admin write with the event that
 * mirrors it; both are written in the transaction of the change itself.
 */
import type { Principal } from '../tenant/principal.js';

export interface ChangeRecord {
  /** Globally unique; becomes the outbox event id and the `Nats-Msg-Id`. */
  eventId: string;
  occurredAt: number;
  actor: string;
  /** The command that caused the change, e.g. `tenant.create`. */
  command: string;
  tenantId: string;
  aggregateType: 'tenant' | 'account' | 'suspension' | 'message' | 'suppression';
  aggregateId: string;
  /** The event mirrored to subscribers, e.g. `tenant.created`. */
  eventType: string;
  eventVersion: number;
  /** Parameters and resulting state, already free of secrets. */
  data: Record<string, unknown>;
  correlationId: string | null;
  /** Fleet mode: the node that took the change (the audit names it on every node). */
  node?: string | undefined;
  /**
   * Fleet mode: a change another node took, applied here from the shared configuration. Only its
   * audit row is written: its event is mirrored by the node that took it, once (every node writing
   * it would store it once per node in the stream whenever the stream's duplicate window has passed).
   */
  auditOnly?: boolean | undefined;
}

export function actorOf(principal: Principal): string {
  return principal.kind === 'admin' ? 'admin' : `tenant:${principal.tenantId}`;
}

/** Builds change records for one command context: the fields every record shares are filled once. */
export function changeRecorder(
  ctx: { principal: Principal; correlationId: string | null; via?: string },
  deps: { now(): number; uuid(): string },
) {
  return (
    change: Pick<ChangeRecord, 'command' | 'eventType' | 'tenantId' | 'aggregateType' | 'aggregateId' | 'data'>,
  ): ChangeRecord => ({
    ...change,
    eventId: deps.uuid(),
    occurredAt: deps.now(),
    // `admin@console`: the same principal, and where it acted from (the audit tells API calls from clicks).
    actor: ctx.via === undefined ? actorOf(ctx.principal) : `${actorOf(ctx.principal)}@${ctx.via}`,
    eventVersion: 1,
    correlationId: ctx.correlationId,
  });
}
