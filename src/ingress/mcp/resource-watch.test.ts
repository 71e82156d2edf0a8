import { describe, expect, it } from 'vitest';
import type { ApiAnswer } from './api-call.js';
import { ResourceWatch, SubscriptionRefused } from './resource-watch.js';

/** A watch over answers the test sets, recording what it notified. */
function watched(max = 3) {
  const answers = new Map<string, ApiAnswer>();
  const notified: string[] = [];
  const watch = new ResourceWatch({
    read: async (uri) =>
      uri.startsWith('mailproxy://') ? (answers.get(uri) ?? { status: 404, body: 'unknown' }) : null,
    notify: async (uri) => {
      notified.push(uri);
    },
    maxSubscriptions: max,
  });
  return { answers, notified, watch };
}

describe('ResourceWatch', () => {
  it('notifies a subscribed resource whose answer changed, once a change', async () => {
    const { answers, notified, watch } = watched();
    answers.set('mailproxy://messages/a', { status: 200, body: { status: 'waiting' } });
    answers.set('mailproxy://messages/b', { status: 200, body: { status: 'waiting' } });
    await watch.subscribe('mailproxy://messages/a');
    await watch.subscribe('mailproxy://messages/b');
    expect(await watch.tick()).toBe(0);
    answers.set('mailproxy://messages/a', { status: 200, body: { status: 'sent' } });
    expect(await watch.tick()).toBe(1);
    expect(notified).toEqual(['mailproxy://messages/a']);
    expect(await watch.tick()).toBe(0);
  });

  it('counts an answer turned into an error as a change, but not a daemon that could not answer', async () => {
    const { answers, notified, watch } = watched();
    answers.set('mailproxy://messages/a', { status: 200, body: { status: 'sent' } });
    await watch.subscribe('mailproxy://messages/a');
    answers.set('mailproxy://messages/a', { status: 503, body: { error: { code: 'STORE_UNAVAILABLE' } } });
    expect(await watch.tick()).toBe(0);
    answers.set('mailproxy://messages/a', { status: 404, body: { error: { code: 'NOT_FOUND' } } });
    expect(await watch.tick()).toBe(1);
    expect(notified).toEqual(['mailproxy://messages/a']);
  });

  it('refuses what it cannot read, a URI that names nothing, and more than its share', async () => {
    const { answers, watch } = watched(2);
    await expect(watch.subscribe('mailproxy://messages/unknown')).rejects.toThrow(SubscriptionRefused);
    await expect(watch.subscribe('https://example.com/')).rejects.toThrow(/no such resource/);
    answers.set('mailproxy://queue', { status: 200, body: {} });
    answers.set('mailproxy://accounts', { status: 200, body: {} });
    answers.set('mailproxy://messages/a', { status: 200, body: {} });
    await watch.subscribe('mailproxy://queue');
    await watch.subscribe('mailproxy://accounts');
    await expect(watch.subscribe('mailproxy://messages/a')).rejects.toThrow(/at most 2/);
    // Subscribing again to what it holds is no new subscription.
    await watch.subscribe('mailproxy://queue');
    expect(watch.size).toBe(2);
  });

  it('says so when the credential itself is refused (a key deleted since)', async () => {
    const { answers, notified, watch } = watched();
    answers.set('mailproxy://queue', { status: 200, body: { waiting: 1 } });
    await watch.subscribe('mailproxy://queue');
    expect(watch.unauthorized).toBe(false);
    answers.set('mailproxy://queue', { status: 401, body: { error: { code: 'UNAUTHORIZED' } } });
    expect(await watch.tick()).toBe(0);
    expect(watch.unauthorized).toBe(true);
    expect(notified).toEqual([]);
  });

  it('stops notifying what was unsubscribed', async () => {
    const { answers, notified, watch } = watched();
    answers.set('mailproxy://queue', { status: 200, body: { waiting: 1 } });
    await watch.subscribe('mailproxy://queue');
    watch.unsubscribe('mailproxy://queue');
    answers.set('mailproxy://queue', { status: 200, body: { waiting: 2 } });
    expect(await watch.tick()).toBe(0);
    expect(notified).toEqual([]);
  });
});
