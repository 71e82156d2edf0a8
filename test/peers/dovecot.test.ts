/**
 * Proves the Dovecot test peer: mail goes in and is listed, an outage closes the
 * port and keeps the mail store, and peers run side by side.
 */
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import { ImapFlow } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDovecot, type DovecotPeer } from './dovecot.js';

function message(n: number): string {
  return [
    'From: MAILER-DAEMON@example.test',
    'To: bounces@example.test',
    `Subject: bounce ${n}`,
    `Message-ID: <bounce-${n}@example.test>`,
    '',
    `body ${n}`,
    '',
  ].join('\r\n');
}

/** The error code of a plain TCP connect (null when it was accepted). */
function connectError(port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(null);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe('Dovecot peer', () => {
  let peer: DovecotPeer;
  beforeAll(async () => {
    peer = await startDovecot();
  });
  afterAll(async () => {
    await peer?.destroy();
  });

  it('lists appended messages with their UIDs, flags and Message-IDs', async () => {
    const uids = [];
    for (const n of [1, 2, 3]) uids.push((await peer.append(message(n), 'INBOX', n === 2 ? ['\\Seen'] : [])).uid);
    expect(uids).toEqual([1, 2, 3]);
    expect(await peer.list()).toEqual([
      { uid: 1, flags: [], messageId: '<bounce-1@example.test>' },
      { uid: 2, flags: ['\\Seen'], messageId: '<bounce-2@example.test>' },
      { uid: 3, flags: [], messageId: '<bounce-3@example.test>' },
    ]);
  });

  it('creates folders and appends into them', async () => {
    await peer.createFolder('Processed');
    expect(await peer.folders()).toEqual(expect.arrayContaining(['INBOX', 'Processed']));
    expect(await peer.list('Processed')).toEqual([]);
    expect(await peer.append(message(9), 'Processed')).toEqual({ uid: 1 });
  });

  it('advertises IDLE, MOVE, UIDPLUS and CONDSTORE after login', async () => {
    const client = new ImapFlow({
      host: peer.host,
      port: peer.port,
      secure: false,
      auth: { user: peer.user, pass: peer.password },
      logger: false,
    });
    await client.connect();
    try {
      expect([...client.capabilities.keys()]).toEqual(expect.arrayContaining(['IDLE', 'MOVE', 'UIDPLUS', 'CONDSTORE']));
    } finally {
      await client.logout();
    }
  });

  it('refuses connections while stopped and keeps the mail and UIDVALIDITY across a restart', async () => {
    const port = peer.port;
    const before = await peer.list();
    const uidValidity = await peer.uidValidity();

    await peer.stop();
    expect(await connectError(port)).toBe('ECONNREFUSED');
    await expect(peer.list()).rejects.toThrow();

    // Within the same outage (a stop costs Dovecot 1 s): a taken port fails the restart
    // with Dovecot's own words, and the restart succeeds once the port is free.
    const squatter = createServer().listen(port, '127.0.0.1');
    await once(squatter, 'listening');
    try {
      await expect(peer.start()).rejects.toThrow(/dovecot exited .*Address already in use/s);
    } finally {
      squatter.close();
      await once(squatter, 'close');
    }

    await peer.start();
    expect(peer.port).toBe(port);
    expect(await peer.uidValidity()).toBe(uidValidity);
    expect(await peer.list()).toEqual(before);
    expect(await peer.append(message(4))).toEqual({ uid: 4 });
  });

  it('runs several peers at once, each with its own port, users and mail', async () => {
    const [a, b] = await Promise.all([
      startDovecot({ users: [{ user: 'a', password: 'pa' }] }),
      startDovecot({ users: [{ user: 'b', password: 'pb' }] }),
    ]);
    try {
      expect(new Set([a.port, b.port, peer.port]).size).toBe(3);
      await Promise.all([a.append(message(10)), b.append(message(20)), b.append(message(21), 'INBOX')]);
      expect((await a.list()).map((m) => m.messageId)).toEqual(['<bounce-10@example.test>']);
      expect((await b.list()).map((m) => m.messageId).sort()).toEqual([
        '<bounce-20@example.test>',
        '<bounce-21@example.test>',
      ]);
    } finally {
      await Promise.all([a.destroy(), b.destroy()]);
    }
  });
});
