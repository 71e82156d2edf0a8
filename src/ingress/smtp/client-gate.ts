/**
 * Connections counted per client address (and, across session processes, in
 * all): the in-process listener's smtp-server counts the total itself, the
 * daemon counts for every session process at once (session-host.ts).
 */
import { replies, type SmtpReply } from './replies.js';

/** A ClientGate that answers at once. */
export interface CountingGate {
  admit(client: string): SmtpReply | null;
  release(client: string): void;
}

export function countingGate(maxPerClient: number, maxTotal = Infinity): CountingGate {
  const perClient = new Map<string, number>();
  let total = 0;
  return {
    admit(client) {
      if (total >= maxTotal) return replies.tooManyClients();
      const open = perClient.get(client) ?? 0;
      if (open >= maxPerClient) return replies.tooManyConnections();
      perClient.set(client, open + 1);
      total += 1;
      return null;
    },
    release(client) {
      const open = perClient.get(client);
      if (open === undefined) return;
      total -= 1;
      if (open <= 1) perClient.delete(client);
      else perClient.set(client, open - 1);
    },
  };
}
