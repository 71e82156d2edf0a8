/**
 * The connect handler when the gate answers later (a session process asks the
 * daemon): a node that began to drain meanwhile turns the client away, and a
 * connection that closed meanwhile is not left counted.
 */
import type { SMTPServerSession } from 'smtp-server';
import { describe, expect, it } from 'vitest';
import type { SmtpReply } from './replies.js';
import { createConnectHandlers } from './session-connect.js';
import type { ClientGate, SmtpSessionDeps } from './session-deps.js';

function setup() {
  let draining = false;
  const released: string[] = [];
  let answer: (refusal: SmtpReply | null) => void = () => undefined;
  const clients: ClientGate = {
    admit: () => new Promise((resolve) => (answer = resolve)),
    release: (client) => void released.push(client),
  };
  const deps = { clients, draining: () => draining, log: { error: () => undefined } } as unknown as SmtpSessionDeps;
  const handlers = createConnectHandlers(deps, { closing: false, inData: new Set(), closeSession: () => undefined });
  const session = { id: 's1', remoteAddress: '192.0.2.1' } as SMTPServerSession;
  const replies: Array<Error | null | undefined> = [];
  const connect = (): Promise<void> =>
    new Promise((resolve) =>
      handlers.onConnect(session, (error) => {
        replies.push(error);
        resolve();
      }),
    );
  return {
    handlers,
    session,
    replies,
    released,
    connect,
    answer: (refusal: SmtpReply | null) => answer(refusal),
    drain: () => (draining = true),
  };
}

describe('connecting through a gate that answers later', () => {
  it('turns the client away when the node began to drain before the answer, and uncounts it', async () => {
    const t = setup();
    const connected = t.connect();
    t.drain();
    t.answer(null);
    await connected;
    expect(t.replies[0]?.message).toMatch(/^4\.3\.2 .*draining/);
    expect(t.released).toEqual(['192.0.2.1']);
  });

  it('admits otherwise, and uncounts the connection once, when it closes', async () => {
    const t = setup();
    const connected = t.connect();
    t.answer(null);
    await connected;
    expect(t.replies).toEqual([undefined]);
    t.handlers.onClose(t.session);
    t.handlers.onClose(t.session);
    expect(t.released).toEqual(['192.0.2.1']);
  });

  it('uncounts a connection that closed before the answer came', async () => {
    const t = setup();
    void t.connect();
    t.handlers.onClose(t.session);
    t.answer(null);
    await Promise.resolve();
    await Promise.resolve();
    expect(t.released).toEqual(['192.0.2.1']);
    expect(t.replies).toEqual([]);
  });
});
