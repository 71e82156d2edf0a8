/**
 * Sustained intake on every node of a test fleet at once: per node one SMTP
 * session (nodemailer's client) and one `POST /add-messages` client, paced, plus
 * a watcher of `/ready`. The ledger keeps what each node acknowledged (250 /
 * 200 `queued`) and when, apart from what it answered with an error: a refusal
 * is reported, never counted as a promise.
 */
import { openSubmission, replyOf, type SubmitSession } from './smtp-submit.js';
import { api } from './test-daemon.js';

export interface FleetLoadTarget {
  id: string;
  url: string;
  smtpPort: number;
  /** The tenant's API key on this node (SMTP password and HTTP token). */
  key: string;
}

export interface Refusal {
  node: string;
  via: 'smtp' | 'http' | 'ready';
  at: number;
  reply: string;
}

export interface FleetLedger {
  /** Acknowledged ids per node, each with when it was acknowledged (ms). */
  acknowledged: Map<string, Map<string, number>>;
  refusals: Refusal[];
}

export interface FleetLoad {
  ledger: FleetLedger;
  /** Asks every client to stop and waits for them. */
  stop(): Promise<void>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const rawMessage = (id: string, to: string): string =>
  [`From: sender@example.com`, `To: ${to}`, `Subject: ${id}`, `X-Genro-Mail-ID: ${id}`, '', `body of ${id}`, ''].join(
    '\r\n',
  );

export function startFleetLoad(
  targets: readonly FleetLoadTarget[],
  tenantId: string,
  pace = { smtpPauseMs: 250, httpBatch: 2, httpPauseMs: 400 },
): FleetLoad {
  const ledger: FleetLedger = { acknowledged: new Map(targets.map((target) => [target.id, new Map()])), refusals: [] };
  let stopping = false;
  const ack = (node: string, id: string) => ledger.acknowledged.get(node)?.set(id, Date.now());
  const refuse = (node: string, via: Refusal['via'], reply: string) =>
    ledger.refusals.push({ node, via, at: Date.now(), reply });

  const smtpClient = async (target: FleetLoadTarget): Promise<void> => {
    let session: SubmitSession | null = null;
    for (let n = 0; !stopping; n += 1) {
      const id = `${target.id}-s-${n}`;
      try {
        if (session === null) {
          session = await openSubmission(target.smtpPort);
          await session.login(tenantId, target.key);
        }
        await session.send(
          { from: 'sender@example.com', to: [`${id}@example.net`] },
          rawMessage(id, `${id}@example.net`),
        );
        ack(target.id, id);
      } catch (error) {
        // A 4yz (or a dropped session) is no promise: noted, and the next message goes on a fresh session.
        refuse(target.id, 'smtp', replyOf(error));
        session?.close();
        session = null;
      }
      await pause(pace.smtpPauseMs);
    }
    session?.close();
  };

  const httpClient = async (target: FleetLoadTarget): Promise<void> => {
    for (let n = 0; !stopping; n += pace.httpBatch) {
      const messages = Array.from({ length: pace.httpBatch }, (_, index) => {
        const id = `${target.id}-h-${n + index}`;
        return { id, from: 'sender@example.com', to: `${id}@example.net`, subject: id, body: `body of ${id}` };
      });
      try {
        const response = await api(target.url, 'POST', '/add-messages', { token: target.key, body: { messages } });
        if (response.status !== 200) refuse(target.id, 'http', `${response.status} ${response.text}`);
        else {
          const rejected = new Set((response.body.rejected as Array<{ id: string }>).map((entry) => entry.id));
          for (const message of messages)
            if (rejected.has(message.id)) refuse(target.id, 'http', `rejected ${message.id}`);
          for (const message of messages) if (!rejected.has(message.id)) ack(target.id, message.id);
        }
      } catch (error) {
        refuse(target.id, 'http', (error as Error).message);
      }
      await pause(pace.httpPauseMs);
    }
  };

  const readyWatcher = async (target: FleetLoadTarget): Promise<void> => {
    while (!stopping) {
      const ready = await api(target.url, 'GET', '/ready').catch((error: unknown) => ({
        status: 0,
        text: (error as Error).message,
      }));
      if (ready.status !== 200) refuse(target.id, 'ready', `${ready.status} ${ready.text}`);
      await pause(500);
    }
  };

  const clients = targets.flatMap((target) => [smtpClient(target), httpClient(target), readyWatcher(target)]);
  return {
    ledger,
    async stop() {
      stopping = true;
      await Promise.all(clients);
    },
  };
}

/** The longest time (ms) between `from`, consecutive acknowledgements and `to`: how long intake stood still. */
export function longestPause(acknowledgedAt: Iterable<number>, from: number, to: number): number {
  const instants = [from, ...[...acknowledgedAt].sort((a, b) => a - b), to];
  let longest = 0;
  for (let index = 1; index < instants.length; index += 1)
    longest = Math.max(longest, (instants[index] as number) - (instants[index - 1] as number));
  return longest;
}

/** Acknowledgements per second since `from`, for the report. */
export function perSecond(acknowledgedAt: Iterable<number>, from: number): number[] {
  const counts: number[] = [];
  for (const at of acknowledgedAt) {
    const second = Math.floor((at - from) / 1000);
    while (counts.length <= second) counts.push(0);
    counts[second] = (counts[second] ?? 0) + 1;
  }
  return counts;
}
