/**
 * A session process seals what it receives before it asks the daemon to enqueue it, as an HTTP
 * parser thread does: the body under a new data key of the tenant, marked as SMTP bytes, and the
 * envelope and subject under another with their search terms. The IPC channel is a function here.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openEnvelope, searchTerms, type SubmissionItem } from '../../core/message/index.js';
import { sealingKeys } from '../../security/index.js';
import { connectSessionLink } from './session-link.js';
import type { FromSession, SessionSettings } from './session-protocol.js';

const RAW = Buffer.from('From: ann@sender.test\r\nTo: bob@rcpt.test\r\nSubject: sealed here\r\n\r\nbody\r\n');
const FIELDS = { mailFrom: 'ann@sender.test', rcptTo: ['bob@rcpt.test'], subject: 'sealed here' };
const item = (content: NonNullable<SubmissionItem['message']>['content']): SubmissionItem => ({
  index: 0,
  id: 'msg-1',
  message: {
    id: 'msg-1',
    batchCode: null,
    deferredUntil: null,
    content,
    messageId: '<m@sender.test>',
    sizeBytes: RAW.length,
    ...FIELDS,
  },
});
const local = {
  policy: {} as SessionSettings['policy'],
  clock: { now: () => 0 },
  ids: { uuid: () => 'id' },
  log: { debug: () => undefined } as never,
};

/** The items of the one enqueue question the link sent, once the turn's batch has left. */
async function enqueued(sealing: boolean, items: SubmissionItem[]) {
  const sent: FromSession[] = [];
  const keys = sealingKeys({ bodyKeys: [{ id: randomBytes(4), key: randomBytes(32) }], blindKey: randomBytes(32) });
  const link = connectSessionLink((batch) => sent.push(batch));
  const deps = link.deps(local, sealing ? keys : null);
  void deps.submissions.enqueue({ kind: 'tenant', tenantId: 'acme' }, items, undefined, null);
  await new Promise((resolve) => setImmediate(resolve));
  const asked = sent.flat().find((entry) => 'ask' in entry && entry.ask.op === 'enqueue');
  if (asked === undefined || !('ask' in asked) || asked.ask.op !== 'enqueue') throw new Error('no enqueue was asked');
  return { items: asked.ask.items, keys };
}

describe('a session process seals what it receives', () => {
  it('asks to enqueue SMTP bytes sealed for the tenant, and the envelope and subject with their search terms', async () => {
    const { items, keys } = await enqueued(true, [item({ kind: 'raw', bytes: RAW })]);
    const message = items[0]?.message;
    const content = message?.content;
    if (content?.kind !== 'sealed') throw new Error(`not sealed: ${content?.kind}`);
    expect(content).toMatchObject({ tenantId: 'acme', source: 'smtp' });
    expect(Buffer.from(content.body).includes(Buffer.from('sealed here'))).toBe(false);
    const { key, body } = content;
    expect(keys.seal.open({ tenantId: 'acme', key, parts: [body] }).equals(RAW)).toBe(true);
    // Bound to its tenant: opened as another's, it does not open.
    expect(() => keys.seal.open({ tenantId: 'beta', key, parts: [body] })).toThrow();
    const envelope = message?.envelope;
    expect(envelope?.tenantId).toBe('acme');
    expect(
      openEnvelope(keys.seal, envelope?.key ?? new Uint8Array(), 'acme', envelope?.sealed ?? new Uint8Array()),
    ).toEqual(FIELDS);
    expect(envelope?.terms).toBe(searchTerms(keys.index, FIELDS));
  });

  it('leaves a spooled message (sealed by the daemon part by part) and a process without keys to the daemon', async () => {
    const spooled = await enqueued(true, [item({ kind: 'spooled', spoolId: 7 })]);
    expect(spooled.items[0]?.message?.content).toEqual({ kind: 'spooled', spoolId: 7 });
    expect(spooled.items[0]?.message?.envelope).toBeUndefined();
    const keyless = await enqueued(false, [item({ kind: 'raw', bytes: RAW })]);
    expect(keyless.items[0]?.message?.content.kind).toBe('raw');
  });
});
