/**
 * What every relay job of an account carries and seldom changes: the account (its relay, its
 * credentials, its limits) and the tenant's DKIM keys. Cloning them into each job cost the main
 * thread more than the message's own envelope. A relay thread keeps the last context it was sent
 * for each account (an account is always served by the same thread, handoff-threads.ts), so a job
 * names it by fingerprint and carries it only when the thread does not hold that one yet. A thread
 * that does not (it was replaced, or never saw it) answers `CONTEXT_MISSING`, and the job goes again
 * whole: a context is never guessed.
 */
import { createHash } from 'node:crypto';
import type { Account } from '../core/account/index.js';
import type { DkimSigner } from '../core/tenant/index.js';

export interface RelayContext {
  account: Account;
  dkim: DkimSigner[];
}

/** A job as it crosses to a relay thread: its context whole, or only named. */
export type Packed<Job extends RelayContext> = Omit<Job, keyof RelayContext> & {
  /** The account's key (affinityOf): the thread's context of that account is the one named. */
  affinity: string;
  context: string;
  whole: RelayContext | null;
};

/** A relay thread's answer to a job whose named context it does not hold. */
export const CONTEXT_MISSING = { contextMissing: true } as const;

export const isContextMissing = (reply: unknown): reply is typeof CONTEXT_MISSING =>
  typeof reply === 'object' && reply !== null && (reply as { contextMissing?: unknown }).contextMissing === true;

/** The main thread's side: what each account's thread holds, and jobs packed accordingly. */
export function contextShipper() {
  // An account is read again at each claim step and the signers once per change of the tenant's
  // domains: a fingerprint is computed once per object, not per message.
  const fingerprints = new WeakMap<object, string>();
  const fingerprintOf = (value: object): string => {
    let found = fingerprints.get(value);
    if (found === undefined) {
      found = createHash('sha256').update(JSON.stringify(value)).digest('base64url');
      fingerprints.set(value, found);
    }
    return found;
  };
  const held = new Map<string, string>();

  return {
    /** `job` for the thread serving `affinity`; `whole` forces the context in (the thread said it was missing). */
    pack<Job extends RelayContext>(job: Job, whole = false): Packed<Job> {
      const { account, dkim, ...rest } = job;
      const affinity = affinityOf(account);
      const context = `${fingerprintOf(account)}.${fingerprintOf(dkim)}`;
      const send = whole || held.get(affinity) !== context;
      // Counted as held once sent: the thread takes its jobs in order, so the ones after it find it.
      if (send) held.set(affinity, context);
      return { ...rest, affinity, context, whole: send ? { account, dkim } : null };
    },
  };
}

/** A relay thread's side: the last context of each account, and jobs unpacked with it. */
export function contextHolder() {
  const held = new Map<string, { context: string; whole: RelayContext }>();
  return {
    /** The job with its context; null when it names one this thread does not hold. */
    unpack<Job extends RelayContext>(packed: Packed<Job>): Job | null {
      const { affinity, context, whole, ...rest } = packed;
      if (whole !== null) held.set(affinity, { context, whole });
      const found = held.get(affinity);
      if (found === undefined || found.context !== context) return null;
      return { ...rest, ...found.whole } as unknown as Job;
    },
  };
}

/** The key of the thread that serves an account, and of its context there. */
export const affinityOf = (account: { tenantId: string; id: string }): string => `${account.tenantId}/${account.id}`;
