/**
 * A real Dovecot 2.3 IMAP server on 127.0.0.1 (REAL-PEERS.md, "IMAP bounce mailbox"):
 * private config, passwd-file users and maildir in one temp dir, a random port; a
 * test can stop it and start it again (same port, same mail) to play an outage.
 *
 * Capabilities Dovecot 2.3.19 advertises after LOGIN include IDLE, MOVE, UIDPLUS,
 * CONDSTORE and QRESYNC (the pre-login greeting lists only IDLE of these): the
 * bounce mailbox may rely on APPENDUID/COPYUID and on MOVE without a fallback here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { ImapFlow } from 'imapflow';
import { configText, prepareDir, type DovecotUser } from './dovecot-config.mjs';

export type { DovecotUser };

export interface StoredMessage {
  uid: number;
  flags: string[];
  /** The Message-ID header (with its angle brackets), or null when the message has none. */
  messageId: string | null;
}

export interface DovecotPeer {
  host: string;
  port: number;
  /** The first user: the one the helpers below log in as. */
  user: string;
  password: string;
  /** IMAP down (the port refuses connections); the mail store is kept. */
  stop(): Promise<void>;
  /** Up again on the same port with the same mail store (and so the same UIDVALIDITY). */
  start(): Promise<void>;
  /** Kills it (SIGKILL: nothing is asked of it any more) and removes the temp dir. */
  destroy(): Promise<void>;
  /** Puts a message into a folder (default INBOX) with IMAP APPEND, as `user` (default the first); the UID comes from UIDPLUS. */
  append(raw: Buffer | string, folder?: string, flags?: string[], user?: string): Promise<{ uid: number }>;
  /** What a folder (default INBOX) holds now, in UID order. */
  list(folder?: string): Promise<StoredMessage[]>;
  folders(): Promise<string[]>;
  createFolder(name: string): Promise<void>;
  uidValidity(folder?: string): Promise<bigint>;
}

const BINARY = '/usr/sbin/dovecot';
const HOST = '127.0.0.1';
const START_DEADLINE_MS = 10_000;
const STOP_DEADLINE_MS = 10_000;
const PORT_ATTEMPTS = 5;

/** Masters still running, killed (with their process groups) if the test process exits without stopping them. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) killGroup(child);
});

/**
 * Kills every process of a master's group. Dovecot's master exits about 1 s after SIGTERM, but a
 * logged-in `imap` process (and `log`, `stats`) outlives it by about 9 s, orphaned, and keeps its
 * client's connection open all that time (measured): an outage would not cut the mailbox's
 * connection. Launched as its own group, the whole server goes at once, as a crashed host's does.
 */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // The group is gone already.
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port free right now: the kernel picks it for a throwaway listener. */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, HOST);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** The first line the server sends, or the connect error (ECONNREFUSED while it is down). */
function firstLine(port: number, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: HOST, port });
    let received = '';
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('no greeting in time')));
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n');
      if (end >= 0) {
        socket.destroy();
        resolve(received.slice(0, end));
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`connection closed before a greeting: ${JSON.stringify(received)}`)));
  });
}

function logTail(dir: string, child: { stderr: string }, lines = 20): string {
  const path = join(dir, 'dovecot.log');
  const log = existsSync(path) ? readFileSync(path, 'utf8') : '';
  return [child.stderr, log].join('\n').trim().split('\n').slice(-lines).join('\n');
}

interface Launched {
  child: ChildProcess;
  stderr: string;
  /** Settles (never rejects) when the master has exited or could not be run: why, for errors. */
  ended: Promise<string>;
}

/** Starts the master in the foreground (-F) so that the child is the master pid we stop. */
function launch(dir: string): Launched {
  // Its own process group (detached): stop() ends the group, children that outlive the master included.
  const child = spawn(BINARY, ['-F', '-c', join(dir, 'dovecot.conf')], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  const ended = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(`dovecot exited (${code ?? signal})`));
    child.once('error', (error) => resolve(`dovecot could not run: ${error.message}`));
  });
  const launched: Launched = { child, stderr: '', ended };
  child.stderr?.on('data', (chunk: Buffer) => (launched.stderr += chunk.toString()));
  running.add(child);
  void ended.then(() => running.delete(child));
  return launched;
}

/** Resolves once our own greeting is on the port; throws with the log tail if the master dies. */
async function waitForGreeting(dir: string, launched: Launched, port: number, greeting: string): Promise<void> {
  const deadline = Date.now() + START_DEADLINE_MS;
  const died = launched.ended.then((why) => ({ died: why }));
  for (let delayMs = 10; ; delayMs = Math.min(delayMs * 2, 100)) {
    // Raced with the master's end: a failed bind must not wait out a silent listener's probe.
    const probe = await Promise.race([firstLine(port, 1_000).catch(() => ''), died]);
    if (typeof probe !== 'string') throw new Error(`${probe.died} on port ${port}:\n${logTail(dir, launched)}`);
    if (probe.startsWith('* OK') && probe.endsWith(greeting)) return;
    if (Date.now() > deadline) {
      killGroup(launched.child);
      throw new Error(
        `dovecot gave no greeting on port ${port} within ${START_DEADLINE_MS} ms:\n${logTail(dir, launched)}`,
      );
    }
    await Promise.race([pause(delayMs), died]);
  }
}

/** Resolves once nothing accepts on the port (the master's login children may outlive it briefly). */
async function waitForPortClosed(port: number): Promise<void> {
  const deadline = Date.now() + STOP_DEADLINE_MS;
  for (;;) {
    const refused = await firstLine(port, 500).then(
      () => false,
      (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED',
    );
    if (refused) return;
    if (Date.now() > deadline) throw new Error(`port ${port} still open ${STOP_DEADLINE_MS} ms after dovecot stopped`);
    await pause(20);
  }
}

/**
 * Between freePort() closing its listener and Dovecot binding, a parallel test may take
 * the port: Dovecot then exits with "Address already in use", and we pick another.
 */
async function startOnFreePort(startOn: (port: number) => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort());
    } catch (error) {
      if (attempt >= PORT_ATTEMPTS || !/Address already in use/.test(String(error))) throw error;
    }
  }
}

/** The `[bounce]` table's header and connection keys for this peer, over plain IMAP: append the test's own keys after it. */
export function bounceToml(dovecot: Pick<DovecotPeer, 'port' | 'user' | 'password'>): string {
  return `[bounce]\nhost = "127.0.0.1"\nport = ${dovecot.port}\ntls = "none"\nuser = "${dovecot.user}"\npassword = "${dovecot.password}"\n`;
}

export async function startDovecot(options: { users?: DovecotUser[] } = {}): Promise<DovecotPeer> {
  if (!existsSync(BINARY))
    throw new Error(`${BINARY} is missing: run bash scripts/test-setup.sh (apt-get install -y dovecot-imapd)`);
  const users = options.users ?? [{ user: 'bounces', password: 'secret' }];
  const first = users[0];
  if (first === undefined) throw new Error('startDovecot needs at least one user');
  const dir = prepareDir(users);
  const greeting = `mailproxy-test-${randomUUID()} ready.`;
  let port = -1;
  let current: Launched | null = null;

  const startOn = async (candidate: number): Promise<void> => {
    writeFileSync(join(dir, 'dovecot.conf'), configText(dir, HOST, candidate, greeting));
    const launched = launch(dir);
    current = launched;
    try {
      await waitForGreeting(dir, launched, candidate, greeting);
    } catch (error) {
      current = null; // dead or killed: a later start() must launch again
      throw error;
    }
    port = candidate;
  };
  const stop = async (): Promise<void> => {
    const launched = current;
    current = null;
    if (launched === null) return;
    // The master closes the port at once, stops its children, and exits about 1 s after
    // SIGTERM (its shutdown sleeps 1 s for the log process); a restart needs it gone.
    launched.child.kill('SIGTERM');
    const timer = setTimeout(() => launched.child.kill('SIGKILL'), STOP_DEADLINE_MS);
    await launched.ended.finally(() => clearTimeout(timer));
    killGroup(launched.child);
    await waitForPortClosed(port);
  };
  /** The end of the peer, its mail store removed after: the whole group is killed at once, without that 1 s. */
  const kill = async (): Promise<void> => {
    const launched = current;
    current = null;
    if (launched === null) return;
    killGroup(launched.child);
    await launched.ended;
    await waitForPortClosed(port);
  };

  try {
    await startOnFreePort(startOn);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  const session = <T>(work: (client: ImapFlow) => Promise<T>, as = first.user) => {
    const who = users.find((candidate) => candidate.user === as);
    if (who === undefined) throw new Error(`no Dovecot user ${as}`);
    return withClient(port, who, work);
  };
  return {
    host: HOST,
    get port() {
      return port;
    },
    user: first.user,
    password: first.password,
    stop,
    async start() {
      if (current !== null) return;
      await startOn(port);
    },
    async destroy() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
    append: (raw, folder = 'INBOX', flags = [], user = first.user) =>
      session(async (client) => {
        const appended = await client.append(folder, raw, flags);
        if (appended === false || appended.uid === undefined) throw new Error(`APPEND to ${folder} gave no APPENDUID`);
        return { uid: appended.uid };
      }, user),
    list: (folder = 'INBOX') => session((client) => listFolder(client, folder)),
    folders: () => session(async (client) => (await client.list()).map((entry) => entry.path)),
    createFolder: (name) => session(async (client) => void (await client.mailboxCreate(name))),
    uidValidity: (folder = 'INBOX') =>
      session(async (client) => {
        const status = await client.status(folder, { uidValidity: true });
        if (status === false || status.uidValidity === undefined) throw new Error(`no UIDVALIDITY for ${folder}`);
        return status.uidValidity;
      }),
  };
}

/** One short IMAP session for a helper: connect, work, log out. */
async function withClient<T>(
  port: number,
  { user, password }: DovecotUser,
  work: (client: ImapFlow) => Promise<T>,
): Promise<T> {
  const client = new ImapFlow({
    host: HOST,
    port,
    secure: false,
    auth: { user, pass: password },
    logger: false,
    disableAutoIdle: true,
  });
  client.on('error', () => {}); // a dropped socket also rejects the pending command; no unhandled 'error'
  try {
    await client.connect();
  } catch (error) {
    client.close();
    throw error;
  }
  try {
    return await work(client);
  } finally {
    await client.logout().catch(() => client.close());
  }
}

async function listFolder(client: ImapFlow, folder: string): Promise<StoredMessage[]> {
  const lock = await client.getMailboxLock(folder, { readOnly: true });
  try {
    if (client.mailbox === false || client.mailbox.exists === 0) return [];
    const messages = await client.fetchAll('1:*', { uid: true, flags: true, envelope: true });
    return (
      messages
        // \Recent is per session (whoever looks first gets it; RFC 3501 §2.3.2), not stored: left out.
        .map((message) => ({
          uid: message.uid,
          flags: [...(message.flags ?? [])].filter((flag) => flag !== '\\Recent').sort(),
          messageId: message.envelope?.messageId ?? null,
        }))
        .sort((a, b) => a.uid - b.uid)
    );
  } finally {
    lock.release();
  }
}
