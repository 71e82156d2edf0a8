/**
 * One IMAP mailbox through imapflow: a connection kept open on the
 * configured folder, IDLE while waiting (imapflow starts it whenever the
 * connection rests, and polls with NOOP on a server without IDLE), messages
 * listed past a UID, read up to a byte limit without setting \Seen, and filed
 * by moving them to a folder or flagging them. Nothing is ever deleted.
 */
import { ImapFlow } from 'imapflow';
import type { BounceDisposition } from '../core/bounce/index.js';

export interface MailboxSettings {
  /** `default` for the instance's mailbox, the tenant id for a tenant's. */
  name: string;
  /** Bounces found in a tenant's mailbox are tied to that tenant's messages only. */
  tenantId: string | null;
  host: string;
  port: number;
  tls: 'implicit' | 'starttls' | 'none';
  tlsRejectUnauthorized: boolean;
  user: string;
  password: string;
  folder: string;
  /** Per disposition, the folder to move to; empty to flag in place. */
  folders: Record<BounceDisposition, string>;
  /** The VERP template relayed mail of this mailbox's tenants carries (core/bounce/verp.ts), or empty. */
  verpReturnPath: string;
  /**
   * A message flagged in place is also marked \Seen. False for a PEC mailbox,
   * which people read too: its unread mail stays unread.
   */
  markSeen: boolean;
}

/** The keyword a message filed in place carries, per disposition: it says "handled" should the checkpoint be lost. */
export const FILED_KEYWORDS: Record<BounceDisposition, string> = {
  processed: '$MailproxyProcessed',
  unmatched: '$MailproxyUnmatched',
  not_bounce: '$MailproxyNotBounce',
};
const HANDLED = new Set(Object.values(FILED_KEYWORDS).map((keyword) => keyword.toLowerCase()));

export interface ListedMessage {
  uid: number;
  size: number;
  /** Carries one of our keywords: handled before, by us. */
  handled: boolean;
}

export interface MailboxSession {
  uidValidity: number;
  /** The server offers IDLE: new mail is told at once rather than found by the next poll. */
  idle: boolean;
  /** Messages with a UID above `afterUid`, in UID order, at most `limit`. */
  listAfter(afterUid: number, limit: number): Promise<ListedMessage[]>;
  /** The first `maxBytes` of each message, by UID, in one FETCH; a message gone meanwhile is missing. */
  readMany(uids: readonly number[], maxBytes: number): Promise<Map<number, Buffer>>;
  file(uids: readonly number[], disposition: BounceDisposition): Promise<void>;
  /**
   * Resolves when the server tells of new mail (at once when it told since the
   * last wait) or when `signal` aborts; rejects when the connection is lost.
   * The poll interval is the watcher's timer, not this.
   */
  wait(signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** imapflow's own timeouts, tighter than its defaults: a dead server is noticed within a minute. */
const CONNECTION_TIMEOUT_MS = 30_000;
const GREETING_TIMEOUT_MS = 15_000;
const SOCKET_TIMEOUT_MS = 10 * 60_000;
/** Start IDLE soon after the last command: a bounce that arrives meanwhile is told at once. */
const AUTO_IDLE_DELAY_MS = 1000;
const IDLE_RENEW_MS = 4 * 60_000;

/** The client for one mailbox, with imapflow's own timeouts tightened and IDLE renewed. */
function imapClient(settings: MailboxSettings): ImapFlow {
  return new ImapFlow({
    host: settings.host,
    port: settings.port,
    secure: settings.tls === 'implicit',
    ...(settings.tls === 'starttls' ? { doSTARTTLS: true } : settings.tls === 'none' ? { doSTARTTLS: false } : {}),
    tls: { rejectUnauthorized: settings.tlsRejectUnauthorized },
    auth: { user: settings.user, pass: settings.password },
    logger: false,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: GREETING_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    autoIdleDelay: AUTO_IDLE_DELAY_MS,
    // IDLE renewed every few minutes: a connection a NAT or firewall dropped silently is noticed.
    maxIdleTime: IDLE_RENEW_MS,
    clientInfo: { name: 'mailproxy' },
  });
}

/**
 * The session's `wait`: what the server tells (new mail, a lost connection) turned into one
 * promise at a time. Listens from before the connection is made, so nothing told is missed.
 */
function newMailSignal(client: ImapFlow): MailboxSession['wait'] {
  let wake: (() => void) | null = null;
  // New mail told while a round was reading: the next wait returns at once.
  let told = false;
  let lost: Error | null = null;
  let fail: ((error: Error) => void) | null = null;
  client.on('exists', () => {
    if (wake === null) told = true;
    else wake();
  });
  client.on('error', (error: Error) => {
    lost ??= error;
    fail?.(error);
  });
  client.on('close', () => {
    lost ??= new Error('the IMAP connection was closed');
    fail?.(lost);
  });

  return (signal) => {
    if (lost !== null) return Promise.reject(lost);
    if (signal.aborted || told) {
      told = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const cleanUp = (): void => {
        signal.removeEventListener('abort', done);
        wake = null;
        fail = null;
      };
      const done = (): void => {
        cleanUp();
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      wake = done;
      fail = (error) => {
        cleanUp();
        reject(error);
      };
    });
  };
}

/** Messages past a UID, listed then read, and filed: the commands of an open mailbox. */
function mailboxCommands(
  client: ImapFlow,
  settings: MailboxSettings,
): Pick<MailboxSession, 'listAfter' | 'readMany' | 'file'> {
  const knownFolders = new Set<string>();
  const ensureFolder = async (folder: string): Promise<void> => {
    if (knownFolders.has(folder)) return;
    const listed = await client.list();
    if (!listed.some((entry) => entry.path === folder)) await client.mailboxCreate(folder);
    knownFolders.add(folder);
  };

  return {
    async listAfter(afterUid, limit) {
      if (client.mailbox === false || client.mailbox.exists === 0) return [];
      // UIDs first (a SEARCH answers numbers only), then flags and sizes of the next `limit` of them:
      // a mailbox with a long backlog costs each round its batch, not the whole backlog.
      const found = await client.search({ uid: `${afterUid + 1}:*` }, { uid: true });
      const uids = (found === false || found === undefined ? [] : found)
        .filter((uid) => uid > afterUid)
        .sort((a, b) => a - b)
        .slice(0, limit);
      if (uids.length === 0) return [];
      const listed: ListedMessage[] = [];
      for await (const message of client.fetch(uids.join(','), { uid: true, flags: true, size: true }, { uid: true })) {
        const flags = [...(message.flags ?? [])].map((flag) => flag.toLowerCase());
        listed.push({ uid: message.uid, size: message.size ?? 0, handled: flags.some((flag) => HANDLED.has(flag)) });
      }
      return listed.sort((a, b) => a.uid - b.uid);
    },

    async readMany(uids, maxBytes) {
      const sources = new Map<number, Buffer>();
      for await (const message of client.fetch(
        uids.join(','),
        { uid: true, source: { maxLength: maxBytes } },
        { uid: true },
      )) {
        if (message.source !== undefined) sources.set(message.uid, message.source);
      }
      return sources;
    },

    async file(uids, disposition) {
      if (uids.length === 0) return;
      const range = uids.join(',');
      const folder = settings.folders[disposition];
      if (folder === '') {
        await client.messageFlagsAdd(
          range,
          settings.markSeen ? ['\\Seen', FILED_KEYWORDS[disposition]] : [FILED_KEYWORDS[disposition]],
          { uid: true },
        );
        return;
      }
      await ensureFolder(folder);
      await client.messageMove(range, folder, { uid: true });
    },
  };
}

export async function openImapMailbox(settings: MailboxSettings): Promise<MailboxSession> {
  const client = imapClient(settings);
  const wait = newMailSignal(client);
  await client.connect();
  const opened = await client.mailboxOpen(settings.folder).catch(async (error: unknown) => {
    await client.logout().catch(() => client.close());
    throw error;
  });
  return {
    uidValidity: Number(opened.uidValidity),
    idle: client.capabilities.has('IDLE'),
    ...mailboxCommands(client, settings),
    wait,
    async close() {
      try {
        await client.logout();
      } catch {
        client.close();
      }
    },
  };
}
