/**
 * The console's sessions, kept in this process only: a random id names each,
 * and it holds the principal, never the token. A restart signs everyone out,
 * which is the safe direction. Sessions end after an idle period or at an
 * absolute age, and with their key (rotated, expired, its tenant deleted: see
 * loadSession); the oldest is dropped when there are too many.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/index.js';
import type { Principal } from '../../core/tenant/index.js';

export interface ConsoleSession {
  id: string;
  principal: Principal;
  /** The key's proof (Authenticator.authenticateForSession), checked again on each request. */
  proof: string;
  /** Sent back with every form; a POST without it is refused. */
  csrfToken: string;
  createdAt: number;
  lastSeenAt: number;
  /** A one-time notice for the next page ("resent 1 message"). */
  flash: string | null;
}

export interface SessionStore {
  create(principal: Principal, proof: string): ConsoleSession;
  /** The live session of this id (its idle clock restarted), or null. */
  touch(id: string): ConsoleSession | null;
  delete(id: string): void;
  size(): number;
}

export interface SessionStoreOptions {
  clock: Clock;
  idleMs: number;
  maxAgeMs: number;
  maxSessions: number;
}

const randomToken = (): string => randomBytes(32).toString('base64url');

export function createSessionStore(options: SessionStoreOptions): SessionStore {
  // Insertion order is creation order: the first entry is the oldest session.
  const sessions = new Map<string, ConsoleSession>();
  const expired = (session: ConsoleSession, now: number): boolean =>
    now - session.lastSeenAt >= options.idleMs || now - session.createdAt >= options.maxAgeMs;

  const sweep = (now: number): void => {
    for (const [id, session] of sessions) if (expired(session, now)) sessions.delete(id);
    while (sessions.size >= options.maxSessions) {
      const oldest = sessions.keys().next().value;
      if (oldest === undefined) break;
      sessions.delete(oldest);
    }
  };

  return {
    create(principal, proof) {
      const now = options.clock.now();
      sweep(now);
      const session: ConsoleSession = {
        id: randomToken(),
        principal,
        proof,
        csrfToken: randomToken(),
        createdAt: now,
        lastSeenAt: now,
        flash: null,
      };
      sessions.set(session.id, session);
      return session;
    },
    touch(id) {
      const session = sessions.get(id);
      if (session === undefined) return null;
      const now = options.clock.now();
      if (expired(session, now)) {
        sessions.delete(id);
        return null;
      }
      session.lastSeenAt = now;
      return session;
    },
    delete(id) {
      sessions.delete(id);
    },
    size: () => sessions.size,
  };
}
