/**
 * Mixed intake load on one running daemon: SMTP submissions (nodemailer's client)
 * and `POST /add-messages` batches at the same time. The ledger records every
 * message the daemon acknowledged (250 / 200 `queued`) and every one merely tried,
 * so the checker can tell a promise from an attempt. Workers stop at their first
 * connection failure (the daemon was killed) or when asked.
 */
import { EventEmitter } from 'node:events';
import type { Rng } from '../helpers/seeded-rng.js';
import { openSubmission, type SubmitSession } from '../helpers/smtp-submit.js';
import { api } from '../helpers/test-daemon.js';
import { REFUSED_DOMAIN, TENANT, type RunningDaemon } from './chaos-rig.js';

export interface Acknowledged {
  via: 'smtp' | 'http';
  at: number;
}

export class Ledger extends EventEmitter {
  readonly acknowledged = new Map<string, Acknowledged>();
  /** Ids handed to the daemon whether or not it answered. */
  readonly tried = new Set<string>();
  /** Ids whose transfer was cut before the end of DATA: never committed, never a message. */
  readonly cut = new Set<string>();

  ack(id: string, via: Acknowledged['via']): void {
    this.acknowledged.set(id, { via, at: Date.now() });
    // Listeners run synchronously: a kill aimed "just after a 250" lands here.
    this.emit('acknowledged', id, via);
  }
}

export interface LoadOptions {
  smtpWorkers: number;
  httpWorkers: number;
  /** Messages each worker submits at most in one run. */
  perWorker: number;
  /** Pause between submissions (ms, seeded): a steady trickle rather than a flood the relay cannot follow. */
  pauseMs: [number, number];
}

export interface LoadRun {
  /** Asks the workers to stop and waits for them. */
  stop(): Promise<void>;
  done: Promise<void>;
}

const recipientFor = (rng: Rng, id: string): string =>
  rng.next() < 0.1 ? `${id}@${REFUSED_DOMAIN}` : `${id}@example.net`;

export function rawMessage(id: string, to: string, body = `body of ${id}\r\n`): string {
  return [`From: sender@example.com`, `To: ${to}`, `Subject: ${id}`, `X-Genro-Mail-ID: ${id}`, '', body].join('\r\n');
}

/** Resolves with `work`, or rejects once the daemon is gone: a client may not notice a dead peer by itself. */
function unlessDead<T>(daemon: RunningDaemon, work: Promise<T>): Promise<T> {
  return Promise.race([work, daemon.process.exited.then(() => Promise.reject(new Error('the daemon exited')))]);
}

const pause = (rng: Rng, [min, max]: [number, number]) =>
  new Promise((resolve) => setTimeout(resolve, rng.int(min, max)));

async function smtpWorker(
  daemon: RunningDaemon,
  key: string,
  name: string,
  rng: Rng,
  ledger: Ledger,
  options: LoadOptions,
  stopping: () => boolean,
): Promise<void> {
  let session: SubmitSession | null = null;
  try {
    session = await unlessDead(daemon, openSubmission(daemon.smtpPort));
    await unlessDead(daemon, session.login(TENANT, key));
    for (let n = 0; n < options.perWorker && !stopping(); n += 1) {
      const id = `${name}-${n}`;
      const to = recipientFor(rng, id);
      ledger.tried.add(id);
      await unlessDead(daemon, session.send({ from: 'sender@example.com', to: [to] }, rawMessage(id, to)));
      ledger.ack(id, 'smtp');
      await pause(rng, options.pauseMs);
    }
    session.close();
  } catch {
    session?.close();
    // The daemon went away mid-session: what was not answered 250 is not acknowledged.
  }
}

async function httpWorker(
  daemon: RunningDaemon,
  key: string,
  name: string,
  rng: Rng,
  ledger: Ledger,
  options: LoadOptions,
  stopping: () => boolean,
): Promise<void> {
  try {
    for (let n = 0; n < options.perWorker && !stopping();) {
      const size = Math.min(rng.int(1, 8), options.perWorker - n);
      const messages = Array.from({ length: size }, (_, index) => {
        const id = `${name}-${n + index}`;
        return { id, from: 'sender@example.com', to: recipientFor(rng, id), subject: id, body: `body of ${id}` };
      });
      n += size;
      for (const message of messages) ledger.tried.add(message.id);
      const response = await unlessDead(
        daemon,
        api(daemon.url, 'POST', '/add-messages', { token: key, body: { messages } }),
      );
      if (response.status !== 200) throw new Error(`add-messages answered ${response.status}: ${response.text}`);
      const rejected = new Set((response.body.rejected as Array<{ id: string }>).map((entry) => entry.id));
      for (const message of messages) if (!rejected.has(message.id)) ledger.ack(message.id, 'http');
      await pause(rng, options.pauseMs);
    }
  } catch {
    // Connection refused or reset: the daemon died; an unanswered batch is not acknowledged.
  }
}

/** Starts the workers; ids are `<label>-s<worker>-<n>` (SMTP) and `<label>-h<worker>-<n>` (HTTP). */
export function startLoad(
  daemon: RunningDaemon,
  key: string,
  label: string,
  rng: Rng,
  ledger: Ledger,
  options: LoadOptions,
): LoadRun {
  let stopped = false;
  const stopping = () => stopped;
  const workers = [
    ...Array.from({ length: options.smtpWorkers }, (_, w) =>
      smtpWorker(daemon, key, `${label}-s${w}`, rng, ledger, options, stopping),
    ),
    ...Array.from({ length: options.httpWorkers }, (_, w) =>
      httpWorker(daemon, key, `${label}-h${w}`, rng, ledger, options, stopping),
    ),
  ];
  const done = Promise.all(workers).then(() => undefined);
  return {
    done,
    async stop() {
      stopped = true;
      await done;
    },
  };
}
