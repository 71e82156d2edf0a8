import { describe, expect, it } from 'vitest';
import { AppError } from '../app-error.js';
import type { NewMessage } from './message.js';
import type { AdminStore } from '../ports.js';
import type { MessageQueue } from './queue.js';
import { createSubmissionService, type SubmissionItem } from './submission-service.js';

/** The tenant's state in the fake store: inactive, suspended batches, ids handed off already, suppressed recipients. */
interface Hold {
  active?: boolean;
  suspensions?: string[];
  sent?: string[];
  suppressed?: string[];
}

/**
 * Group commit, in core terms: a fake store that records transactions (an outer
 * one, and nested ones as savepoints that undo their own writes when they throw).
 */
function fakeStore(failFor: string | null, failure: () => Error = () => new Error('disk trouble'), hold: Hold = {}) {
  const committed: string[] = [];
  const entered = new Map<string, boolean>();
  let pending: string[] = [];
  let depth = 0;
  const log = { outer: 0, savepoints: 0 };
  const store = {
    // The fake disk is synced at once: durability is the store's promise, tested in store/.
    commitGroup<T>(fn: () => T): Promise<T> {
      try {
        return Promise.resolve(store.transaction(fn));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    tenants: { isActive: (id: string) => (id === 'acme' ? (hold.active ?? true) : null), routes: () => [] },
    accounts: { choices: () => [{ id: 'main', isDefault: true }] },
    transaction<T>(fn: () => T): T {
      if (depth === 0) log.outer += 1;
      else log.savepoints += 1;
      const mark = pending.length;
      depth += 1;
      try {
        const result = fn();
        if (depth === 1) committed.push(...pending.splice(0));
        return result;
      } catch (error) {
        pending = pending.slice(0, mark);
        throw error;
      } finally {
        depth -= 1;
      }
    },
  } as unknown as AdminStore & { transaction<T>(fn: () => T): T };
  const queue = {
    states: (_tenant: string, ids: string[]) =>
      new Map(ids.filter((id) => hold.sent?.includes(id)).map((id) => [id, 'sent'])),
    suppressed: (_tenant: string, addresses: string[]) =>
      new Set(addresses.filter((address) => hold.suppressed?.includes(address))),
    enqueue(messages: readonly NewMessage[]) {
      const notWaiting: NewMessage[] = [];
      for (const message of messages) {
        if (message.id === failFor) throw failure();
        if (hold.sent?.includes(message.id)) {
          notWaiting.push(message);
          continue;
        }
        pending.push(message.id);
        entered.set(message.id, message.suspended);
      }
      return { inserted: messages.length - notWaiting.length, updated: 0, notWaiting };
    },
  } as unknown as MessageQueue;
  return { store, queue, committed, log, entered };
}

const item = (id: string, index = 0, batchCode: string | null = null): SubmissionItem => ({
  index,
  id,
  message: {
    id,
    batchCode,
    deferredUntil: null,
    content: { kind: 'payload', json: '{}' },
    subject: 's',
    messageId: '<x@acme.example>',
    mailFrom: 'a@acme.example',
    rcptTo: ['b@example.net'],
    sizeBytes: 1,
  },
});

function service(failFor: string | null = null, failure?: () => Error, hold?: Hold) {
  const fake = fakeStore(failFor, failure, hold);
  const deferred: Array<() => void> = [];
  const woken: string[] = [];
  const submissions = createSubmissionService({
    store: fake.store,
    queue: fake.queue,
    messages: { suspensions: () => hold?.suspensions ?? [] },
    clock: { now: () => 1_000 },
    ids: { uuid: () => 'uuid' },
    wake: (accounts) => woken.push(...accounts.map((account) => account.accountId)),
    defer: (fn) => deferred.push(fn),
  });
  const principal = { kind: 'tenant', tenantId: 'acme' } as const;
  return { ...fake, submissions, deferred, woken, principal };
}

describe('submission group commit', () => {
  it('commits the requests of one turn in one transaction and answers none before it', async () => {
    const s = service();
    const answered: string[] = [];
    const first = s.submissions
      .enqueue(s.principal, [item('a-1'), item('a-2', 1)], undefined, null)
      .then((r) => answered.push(`first:${r.queued}`));
    const second = s.submissions
      .enqueue(s.principal, [item('b-1')], undefined, null)
      .then((r) => answered.push(`second:${r.queued}`));
    await Promise.resolve();
    expect(answered).toEqual([]);
    expect(s.committed).toEqual([]);
    expect(s.deferred).toHaveLength(1);

    s.deferred[0]?.();
    await Promise.all([first, second]);
    expect(s.log.outer).toBe(1);
    // The common case pays for no savepoint.
    expect(s.log.savepoints).toBe(0);
    expect(s.committed).toEqual(['a-1', 'a-2', 'b-1']);
    expect(answered).toEqual(['first:2', 'second:1']);
    expect(s.woken).toEqual(['main', 'main', 'main']);
  });

  it("keeps one request's failure its own: the others of the turn are committed", async () => {
    const s = service('b-1');
    const first = s.submissions.enqueue(s.principal, [item('a-1')], undefined, null);
    const second = s.submissions.enqueue(s.principal, [item('b-0'), item('b-1', 1)], undefined, null);
    const third = s.submissions.enqueue(s.principal, [item('c-1')], undefined, null);
    s.deferred[0]?.();
    await expect(first).resolves.toMatchObject({ queued: 1 });
    await expect(second).rejects.toThrow('disk trouble');
    await expect(third).resolves.toMatchObject({ queued: 1 });
    // Nothing half-stored: the group's first transaction was rolled back, and
    // written again with a savepoint per request, b-0 going with its request's.
    expect(s.log.outer).toBe(2);
    expect(s.log.savepoints).toBe(3);
    expect(s.committed).toEqual(['a-1', 'c-1']);
  });

  it('fails the whole group when the store cannot write: nobody hears "queued", nothing is committed', async () => {
    const s = service('b-1', () => new AppError('STORE_UNAVAILABLE', 'database or disk is full', { transient: true }));
    const first = s.submissions.enqueue(s.principal, [item('a-1')], undefined, null);
    const second = s.submissions.enqueue(s.principal, [item('b-1')], undefined, null);
    const third = s.submissions.enqueue(s.principal, [item('c-1')], undefined, null);
    s.deferred[0]?.();
    for (const request of [first, second, third])
      await expect(request).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(s.committed).toEqual([]);
    expect(s.woken).toEqual([]);
  });

  it('starts a new group for requests that come after a flush', async () => {
    const s = service();
    const first = s.submissions.enqueue(s.principal, [item('a-1')], undefined, null);
    s.deferred[0]?.();
    await first;
    const second = s.submissions.enqueue(s.principal, [item('b-1')], undefined, null);
    expect(s.deferred).toHaveLength(2);
    s.deferred[1]?.();
    await second;
    expect(s.log.outer).toBe(2);
  });

  it('holds the requests that come while a group is being synced, and commits them together after it', async () => {
    const s = service();
    // The disk syncs when the test says so.
    const syncs: Array<() => void> = [];
    const commitGroup = s.store.commitGroup.bind(s.store);
    s.store.commitGroup = <T>(fn: () => T): Promise<T> =>
      commitGroup(fn).then((result) => new Promise<T>((resolve) => syncs.push(() => resolve(result))));
    const first = s.submissions.enqueue(s.principal, [item('a-1')], undefined, null);
    s.deferred[0]?.();
    expect(s.log.outer).toBe(1);
    await Promise.resolve();
    // Two more turns while the first group's sync runs: neither commits yet.
    const second = s.submissions.enqueue(s.principal, [item('b-1')], undefined, null);
    s.deferred[1]?.();
    const third = s.submissions.enqueue(s.principal, [item('c-1')], undefined, null);
    expect(s.log.outer).toBe(1);
    await Promise.resolve();
    expect(syncs).toHaveLength(1);
    syncs[0]?.();
    await expect(first).resolves.toMatchObject({ queued: 1 });
    // Then both in one transaction, answered after their own sync.
    await expect.poll(() => syncs.length).toBe(2);
    expect(s.log.outer).toBe(2);
    expect(s.committed).toEqual(['a-1', 'b-1', 'c-1']);
    syncs[1]?.();
    await expect(Promise.all([second, third])).resolves.toMatchObject([{ queued: 1 }, { queued: 1 }]);
  });

  it('lets mail of a suspended batch enter suspended, without waking the dispatcher for it', async () => {
    const s = service(null, undefined, { suspensions: ['promo'] });
    const request = s.submissions.enqueue(
      s.principal,
      [item('p-1', 0, 'promo'), item('n-1', 1, 'news'), item('x-1', 2)],
      undefined,
      null,
    );
    s.deferred[0]?.();
    await expect(request).resolves.toMatchObject({ queued: 3 });
    expect(Object.fromEntries(s.entered)).toEqual({ 'p-1': true, 'n-1': false, 'x-1': false });
    expect(s.woken).toEqual(['main', 'main']);
  });

  it('holds all mail of a suspended or inactive tenant', async () => {
    for (const hold of [{ suspensions: ['*'] }, { active: false }]) {
      const s = service(null, undefined, hold);
      const request = s.submissions.enqueue(s.principal, [item('p-1', 0, 'promo'), item('x-1', 1)], undefined, null);
      s.deferred[0]?.();
      await request;
      expect(Object.fromEntries(s.entered)).toEqual({ 'p-1': true, 'x-1': true });
      expect(s.woken).toEqual([]);
    }
  });

  it('rejects an id already handed off as "already sent", also when a recipient was suppressed since, and queues the rest', async () => {
    const s = service(null, undefined, { sent: ['old-1', 'old-2'], suppressed: ['b@example.net'] });
    const fresh = { ...item('new-1', 2), message: { ...item('new-1').message!, rcptTo: ['c@example.net'] } };
    const request = s.submissions.enqueue(
      s.principal,
      [
        item('old-1'),
        { ...item('old-2', 1), message: { ...item('old-2').message!, rcptTo: ['c@example.net'] } },
        fresh,
        item('held-1', 3),
      ],
      undefined,
      null,
    );
    s.deferred[0]?.();
    await expect(request).resolves.toEqual({
      queued: 1,
      rejected: [
        { index: 0, id: 'old-1', reason: 'already sent', code: 'ALREADY_SENT' },
        { index: 1, id: 'old-2', reason: 'already sent', code: 'ALREADY_SENT' },
        { index: 3, id: 'held-1', reason: 'suppressed', code: 'SUPPRESSED' },
      ],
    });
    expect(s.committed).toEqual(['new-1']);
    expect(s.woken).toEqual(['main']);
  });
});
