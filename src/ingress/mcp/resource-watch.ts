/**
 * What stands behind `resources/subscribe`: the URIs a client subscribed to, each with a digest of
 * what it last read as. Each `tick()` reads them again (as the caller, through the API) and
 * notifies those whose answer changed, so a client hears of a message's new state, a queue that
 * moved or an account that went unwell, at most once a tick. Polling keeps the watch the same on
 * the daemon and over stdio, and what it sees is only what the caller may read.
 */
import { createHash } from 'node:crypto';
import type { Clock, Logger } from '../../core/index.js';
import { createPeriodicLoop, type PeriodicLoop } from '../../runtime/index.js';
import type { ApiAnswer } from './api-call.js';

export interface ResourceWatchDeps {
  /** The resource's API answer; null for a URI that names no resource. */
  read(uri: string): Promise<ApiAnswer | null>;
  notify(uri: string): Promise<void>;
  /** Subscriptions one client may hold. */
  maxSubscriptions: number;
}

/** A client subscribed to more than it may, or to a URI that names nothing. */
export class SubscriptionRefused extends Error {}

/** An answer's digest: its status and body, so an answer turning into an error (a message deleted) counts as a change. */
const digestOf = (answer: ApiAnswer): string =>
  createHash('sha256')
    .update(`${answer.status}\n${JSON.stringify(answer.body)}`)
    .digest('base64url');

export class ResourceWatch {
  private readonly seen = new Map<string, string>();
  /** A read was refused for the credential itself (a key deleted or rotated away): the session has no reason to live. */
  unauthorized = false;

  constructor(private readonly deps: ResourceWatchDeps) {}

  get size(): number {
    return this.seen.size;
  }

  async subscribe(uri: string): Promise<void> {
    if (!this.seen.has(uri) && this.seen.size >= this.deps.maxSubscriptions)
      throw new SubscriptionRefused(`at most ${this.deps.maxSubscriptions} subscriptions a session`);
    const answer = await this.deps.read(uri);
    if (answer === null) throw new SubscriptionRefused(`${uri}: no such resource`);
    // Another tenant's message is refused as an unknown one is: with the API's own answer.
    if (answer.status >= 400) throw new SubscriptionRefused(`${uri}: ${JSON.stringify(answer.body)}`);
    this.seen.set(uri, digestOf(answer));
  }

  unsubscribe(uri: string): void {
    this.seen.delete(uri);
  }

  /** Reads every subscribed URI once; answers how many changed (and were notified). */
  async tick(): Promise<number> {
    let changed = 0;
    for (const [uri, before] of [...this.seen]) {
      const answer = await this.deps.read(uri).catch(() => null);
      if (answer?.status === 401) {
        this.unauthorized = true;
        return changed;
      }
      // Unsubscribed while it was read, or the daemon could not answer (a 5xx): no news, next tick.
      if (answer === null || answer.status >= 500 || !this.seen.has(uri)) continue;
      const now = digestOf(answer);
      if (now === before) continue;
      this.seen.set(uri, now);
      changed += 1;
      await this.deps.notify(uri);
    }
    return changed;
  }
}

/** The watch's reads (`tick`) every `intervalMs` on the project's periodic loop, started: on the daemon and over stdio. */
export function startWatchLoop(
  tick: () => Promise<unknown>,
  intervalMs: number,
  log: Logger,
  clock?: Clock,
): PeriodicLoop {
  const run = async (): Promise<void> => void (await tick());
  const loop = createPeriodicLoop({
    name: 'mcp-watch',
    intervalMs,
    run,
    log,
    ...(clock === undefined ? {} : { clock }),
  });
  loop.start();
  return loop;
}
