// A real Dovecot for the bounce benchmark, from the test peer's own setup
// (test/peers/dovecot-config.mjs): a private config and maildir in a temp dir,
// a free port, readiness by its greeting. Plus bulk APPEND and MOVE over IMAP.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { ImapFlow } from 'imapflow';
import { configText, prepareDir } from '../test/peers/dovecot-config.mjs';

const USER = { user: 'bounces', password: 'bench-secret' };

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
      .listen(0, '127.0.0.1', () => {
        const { port } = server.address();
        server.close(() => resolve(port));
      })
      .on('error', reject);
  });

const greets = (port, greeting) =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(1000, () => socket.destroy());
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().includes(greeting));
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });

export async function startBenchDovecot(children) {
  const dir = prepareDir([USER]);
  const port = await freePort();
  const greeting = `mailproxy-bench-${randomUUID()} ready.`;
  writeFileSync(join(dir, 'dovecot.conf'), configText(dir, '127.0.0.1', port, greeting));
  const child = spawn('/usr/sbin/dovecot', ['-F', '-c', join(dir, 'dovecot.conf')], { stdio: 'ignore' });
  children.add(child);
  const deadline = Date.now() + 10_000;
  while (!(await greets(port, greeting))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('dovecot did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const session = async (work) => {
    const client = new ImapFlow({
      host: '127.0.0.1',
      port,
      secure: false,
      doSTARTTLS: false,
      auth: { user: USER.user, pass: USER.password },
      logger: false,
    });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.logout();
    }
  };
  return {
    port,
    user: USER.user,
    password: USER.password,
    async appendAll(raws, folder) {
      await session(async (client) => {
        if (!(await client.list()).some((entry) => entry.path === folder)) await client.mailboxCreate(folder);
        for (const raw of raws) await client.append(folder, raw);
      });
    },
    /** Everything in `from` into `to` with one MOVE: the reader sees all of it at once. */
    async moveAll(from, to) {
      await session(async (client) => {
        await client.mailboxOpen(from);
        await client.messageMove('1:*', to);
      });
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      children.delete(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Postfix-style DSN for our message `id`: one failed recipient, the original's headers returned. */
export function dsnFor(id) {
  return [
    'From: MAILER-DAEMON@mx.bench.example (Mail Delivery System)',
    'To: bounces@proxy.bench.example',
    'Subject: Undelivered Mail Returned to Sender',
    `Message-ID: <${randomUUID()}@mx.bench.example>`,
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain',
    '',
    'This is the mail system at host mx.bench.example.',
    "I'm sorry to have to inform you that your message could not be delivered to one or more recipients.",
    '',
    '--b',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.bench.example',
    '',
    `Final-Recipient: rfc822; ${id}@example.net`,
    'Action: failed',
    'Status: 5.1.1',
    `Diagnostic-Code: smtp; 550 5.1.1 <${id}@example.net>: Recipient address rejected: User unknown in local recipient table`,
    '',
    '--b',
    'Content-Type: text/rfc822-headers',
    '',
    'From: shop@bench.example',
    `To: ${id}@example.net`,
    `Subject: order ${id}`,
    `Message-ID: <${id}@bench.example>`,
    `X-Genro-Mail-ID: ${id}`,
    '',
    '--b--',
    '',
  ].join('\r\n');
}
