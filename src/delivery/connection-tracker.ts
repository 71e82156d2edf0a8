/**
 * What one pooled transport's connections are doing, which nodemailer's pool
 * does not show: sockets open, connections carrying a message, and when each
 * message got its connection. nodemailer gives queued messages to free
 * connections first in, first out (smtp-pool `_processMessages`), so mirroring
 * that order tells when a message's SMTP transaction began without reaching
 * into its internals. The dispatcher hands up to ON_WIRE_PER_CONNECTION
 * messages per connection to the pool, so the time from `sendMail` alone would
 * count the wait behind the others as the relay's.
 */

export interface Ticket {
  /** When the message got a connection; null while it waits for one. */
  startedAt: number | null;
}

export interface ConnectionTracker {
  /** Sockets: told by the transport's socket factory. */
  opened(): void;
  closed(): void;
  /** A message handed to the pool. */
  enqueue(): Ticket;
  /** Its answer came: the transaction's duration, or undefined when it never got a connection (the pool closed). */
  finish(ticket: Ticket): number | undefined;
  open(): number;
  inUse(): number;
}

export function createConnectionTracker(
  maxConnections: number,
  now: () => number = () => performance.now(),
): ConnectionTracker {
  let open = 0;
  let busy = 0;
  const waiting: Ticket[] = [];
  return {
    opened: () => void (open += 1),
    closed: () => void (open = Math.max(0, open - 1)),
    enqueue() {
      const ticket: Ticket = { startedAt: null };
      if (busy < maxConnections) {
        busy += 1;
        ticket.startedAt = now();
      } else {
        waiting.push(ticket);
      }
      return ticket;
    },
    finish(ticket) {
      const at = now();
      if (ticket.startedAt === null) {
        // Failed while queued (the pool closed under it): its place goes, no connection is freed.
        const index = waiting.indexOf(ticket);
        if (index >= 0) waiting.splice(index, 1);
        return undefined;
      }
      // The freed connection takes the next queued message, as the pool does.
      const next = waiting.shift();
      if (next === undefined) busy -= 1;
      else next.startedAt = at;
      return at - ticket.startedAt;
    },
    open: () => open,
    inUse: () => busy,
  };
}
