/**
 * The invariant checker of a chaos run, once the last daemon has settled: what
 * was acknowledged, what the relay got, what the stream holds and what the
 * client was told, each compared with the store. Collects every violation with
 * its evidence instead of stopping at the first, and counts what it checked.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { readStream } from '../peers/nats-server.js';
import type { SinkMessage } from '../peers/smtp-sink.js';
import { TENANT, type ChaosRig, type RunningDaemon } from './chaos-rig.js';
import type { Kill } from './kill-targets.js';
import type { Ledger } from './load.js';

/** Time between the relay's 250 and a kill that can still have cut the commit of the outcome (generous: a loaded 2-core machine). */
const OUTCOME_SLACK_MS = 2000;

/** ARCHITECTURE.md §4.5 (sent, error, deferred, bounced) and the outcomes added since (expired, complained). */
const REPORTED_EVENTS = new Set(
  ['sent', 'error', 'expired', 'deferred', 'bounced', 'complained'].map((type) => `message.${type}`),
);

export interface CheckResult {
  violations: string[];
  counts: {
    acknowledged: number;
    messagesChecked: number;
    sent: number;
    error: number;
    copiesAtSink: number;
    duplicatesAtSink: number;
    eventsChecked: number;
    reportItemsExpected: number;
    reportItemsRepeated: number;
  };
  /** Each duplicate at the sink with why it is allowed. */
  duplicates: string[];
}

interface MessageRow {
  id: string;
  state: string;
}
interface OutboxRow {
  seq: number;
  id: string;
  event_type: string;
  message_id: string | null;
}

function readStore(dataDir: string): { messages: MessageRow[]; outbox: OutboxRow[]; cursor: number } {
  const db = new Database(join(dataDir, 'mailproxy.db'), { readonly: true, fileMustExist: true });
  try {
    return {
      messages: db.prepare(`SELECT id, state FROM messages WHERE tenant_id = ?`).all(TENANT) as MessageRow[],
      outbox: db.prepare(`SELECT seq, id, event_type, message_id FROM outbox ORDER BY seq`).all() as OutboxRow[],
      cursor: db.prepare(`SELECT cursor_seq FROM mirror_state`).pluck().get() as number,
    };
  } finally {
    db.close();
  }
}

/** What the relay received, keyed by the X-Genro-Mail-ID of each copy; a copy whose Subject (our id) disagrees is a violation. */
function copiesById(messages: SinkMessage[], violations: string[]): Map<string, SinkMessage[]> {
  const copies = new Map<string, SinkMessage[]>();
  for (const received of messages) {
    const head = received.raw.toString('utf8').split('\r\n\r\n')[0] ?? '';
    const header = (name: string) =>
      [...head.replace(/\r\n[ \t]+/g, ' ').matchAll(new RegExp(`^${name}:[ \\t]*(.*)$`, 'gim'))].map((match) =>
        (match[1] ?? '').trim(),
      );
    const mailIds = header('X-Genro-Mail-ID');
    const subject = header('Subject')[0] ?? '';
    if (mailIds.length !== 1 || mailIds[0] !== subject)
      violations.push(`relay got "${subject}" with X-Genro-Mail-ID ${JSON.stringify(mailIds)}`);
    const id = mailIds[0] ?? subject;
    copies.set(id, [...(copies.get(id) ?? []), received]);
  }
  return copies;
}

/**
 * A second copy is allowed only when a kill fell while the earlier copy was
 * being sent (from its start, its arrival minus the relay's answer delay, to
 * shortly after the relay answered) and the store recorded the interrupted lease.
 */
function explainDuplicates(
  copies: Map<string, SinkMessage[]>,
  kills: Kill[],
  leaseExpired: Map<string, number>,
  relayDelayMs: number,
  violations: string[],
): string[] {
  const explained: string[] = [];
  for (const [id, list] of copies) {
    if (list.length < 2) continue;
    const reasons: string[] = [];
    for (let i = 1; i < list.length; i += 1) {
      // The outcome of a send is committed within milliseconds of the relay's 250; a daemon that
      // lived on for seconds after it and still sent again did not lose it to a crash.
      const answered = (list[i - 1] as SinkMessage).receivedAt;
      const kill = kills.find(
        (k) =>
          k.at >= answered - relayDelayMs - 250 &&
          k.at <= answered + OUTCOME_SLACK_MS &&
          k.at <= (list[i] as SinkMessage).receivedAt,
      );
      if (kill === undefined) violations.push(`${id}: copy ${i + 1} at the relay with no kill since copy ${i}`);
      else reasons.push(`kill #${kills.indexOf(kill) + 1} (${kill.target}) hit its send`);
    }
    const leases = leaseExpired.get(id) ?? 0;
    if (leases < list.length - 1)
      violations.push(`${id}: ${list.length} copies at the relay but ${leases} lease_expired event(s)`);
    explained.push(`${id} x${list.length}: ${reasons.join('; ')}; ${leases} lease_expired`);
  }
  return explained;
}

export async function checkInvariants(
  rig: ChaosRig,
  ledger: Ledger,
  kills: Kill[],
  relayDelayMs: number,
): Promise<CheckResult> {
  const violations: string[] = [];
  const store = readStore(rig.dataDir);
  const states = new Map(store.messages.map((row) => [row.id, row.state]));

  for (const id of ledger.acknowledged.keys()) {
    const state = states.get(id);
    if (state === undefined) violations.push(`${id}: acknowledged but not in the store`);
    else if (state !== 'sent' && state !== 'error') violations.push(`${id}: acknowledged and left ${state}`);
  }
  for (const row of store.messages) {
    if (row.state !== 'sent' && row.state !== 'error') violations.push(`${row.id}: left ${row.state}`);
    if (!ledger.tried.has(row.id)) violations.push(`${row.id}: in the store but never submitted`);
  }
  for (const id of ledger.cut)
    if (states.has(id)) violations.push(`${id}: a transfer cut before the end of DATA became a message`);

  const copies = copiesById(rig.sink.messages, violations);
  for (const row of store.messages) {
    if (row.state === 'sent' && !copies.has(row.id))
      violations.push(`${row.id}: sent, but the relay never received it`);
  }
  for (const id of copies.keys())
    if (!states.has(id)) violations.push(`${id}: the relay received a message the store does not know`);
  const leaseExpired = new Map<string, number>();
  for (const row of store.outbox) {
    if (row.event_type === 'message.lease_expired' && row.message_id !== null)
      leaseExpired.set(row.message_id, (leaseExpired.get(row.message_id) ?? 0) + 1);
  }
  const duplicates = explainDuplicates(copies, kills, leaseExpired, relayDelayMs, violations);

  // The stream holds every outbox event exactly once, and nothing else.
  const stream = await readStream(rig.nats.url, 'MAILPROXY');
  const inStream = new Map<string, number>();
  for (const event of stream) {
    // Counted by the event id in the body: a republish under another Nats-Msg-Id is still the same event twice.
    const key = String(event.body.event_id);
    if (event.msgId !== key) violations.push(`stream seq ${event.seq}: Nats-Msg-Id ${event.msgId} for event ${key}`);
    inStream.set(key, (inStream.get(key) ?? 0) + 1);
  }
  const outboxIds = new Set(store.outbox.map((row) => row.id));
  for (const row of store.outbox) {
    const count = inStream.get(row.id) ?? 0;
    if (count !== 1)
      violations.push(
        `event ${row.id} (${row.event_type} of ${row.message_id ?? 'no message'}) is in the stream ${count} times`,
      );
  }
  for (const id of inStream.keys())
    if (!outboxIds.has(id)) violations.push(`the stream holds ${id}, which the outbox never had`);

  // Every report item reached the client at least once, in a post the client acknowledged.
  const delivered = rig.acceptedItems;
  const expected = store.outbox.filter((row) => REPORTED_EVENTS.has(row.event_type));
  for (const row of expected)
    if (!delivered.has(row.id))
      violations.push(
        `report item ${row.id} (${row.event_type} of ${row.message_id}) never reached the client in an acknowledged post`,
      );

  return {
    violations,
    duplicates,
    counts: {
      acknowledged: ledger.acknowledged.size,
      messagesChecked: store.messages.length,
      sent: store.messages.filter((row) => row.state === 'sent').length,
      error: store.messages.filter((row) => row.state === 'error').length,
      copiesAtSink: rig.sink.messages.length,
      duplicatesAtSink: [...copies.values()].reduce((sum, list) => sum + list.length - 1, 0),
      eventsChecked: store.outbox.length,
      reportItemsExpected: expected.length,
      reportItemsRepeated: [...delivered.values()].filter((count) => count > 1).length,
    },
  };
}

/** Waits (polling the daemon's own status routes) until no message waits and both the mirror and the reports have caught up. */
export async function waitUntilSettled(rig: ChaosRig, daemon: RunningDaemon, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const open = readStore(rig.dataDir).messages.filter((row) => row.state !== 'sent' && row.state !== 'error').length;
    const mirror = (await rig.admin(daemon, 'GET', '/mirror/status')).body?.mirror?.backlog;
    const reports = (await rig.admin(daemon, 'GET', `/tenant/${TENANT}/sync-status`)).body?.sync_status?.backlog;
    last = `${open} message(s) not final, mirror backlog ${mirror}, report backlog ${reports}`;
    if (open === 0 && mirror === 0 && reports === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not settled after ${timeoutMs} ms: ${last}`);
}
