/**
 * Issue 24 on real peers (a three-server NATS cluster, three `mailproxy serve`
 * processes, one SMTP sink behind them all): a client id accepted on one node
 * is a repeat on another; `mailproxy fleet drain` moves every waiting message
 * of a node to the others, each delivered once, and the node refuses intake
 * and leaves without being reported missing.
 */
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimKey } from '../../src/fleet/claims/idempotency-claims.js';
import { runCli } from '../helpers/cli-process.js';
import {
  FLEET_TOKEN,
  provisionTenant,
  startFleet,
  untilFleet,
  type FleetStatus,
  type TestFleet,
} from '../helpers/fleet.js';
import { openRawSmtp } from '../helpers/raw-smtp.js';
import { openSubmission } from '../helpers/smtp-submit.js';
import { api } from '../helpers/test-daemon.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';
import { eventually } from '../helpers/eventually.js';

let fleet: TestFleet;
let sink: SmtpSink;
/** Each node's API key of tenant acme (SMTP AUTH). */
const keys = new Map<string, string>();

const admin = (url: string, method: string, path: string, body?: unknown) =>
  api(url, method, path, { token: FLEET_TOKEN, body });
const message = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  tenant_id: 'acme',
  from: 'app@acme.example',
  to: 'someone@example.org',
  subject: `message ${id}`,
  body: 'hello',
  ...extra,
});
const post = (url: string, messages: unknown[]) => admin(url, 'POST', '/add-messages', { messages });
const urlOf = (id: string): string => fleet.nodes.find((node) => node.id === id)?.url as string;

/** The X-Genro-Mail-ID of every message the sink accepted, with how many times each came. */
function deliveries(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const received of sink.messages) {
    const id = /^X-Genro-Mail-ID:\s*(\S+)/im.exec(received.raw.toString('utf8'))?.[1] ?? '?';
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** Each check asks the nodes over HTTP: every 100 ms. */
const until = (check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> =>
  eventually(check, what, timeoutMs, 100);

const waitingOn = async (url: string): Promise<number> =>
  (await admin(url, 'GET', '/status')).body.queue.waiting as number;

beforeAll(async () => {
  sink = await startSmtpSink();
  fleet = await startFleet(['n1', 'n2', 'n3']);
  const key = await provisionTenant(fleet, 'acme', { host: '127.0.0.1', port: sink.port, tls_mode: 'none' });
  for (const node of fleet.nodes) keys.set(node.id, key);
}, 120_000);

afterAll(async () => {
  await fleet?.destroy();
  await sink?.stop();
});

describe('idempotency across the fleet', () => {
  it('answers a client id accepted on n1 and posted again on n2 as a repeat, and delivers it once', async () => {
    const first = await post(urlOf('n1'), [message('dup-1')]);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ ok: true, queued: 1, rejected: [] });

    const again = await post(urlOf('n2'), [message('dup-1'), message('fresh-1')]);
    expect(again.status).toBe(200);
    expect(again.body.queued).toBe(1);
    expect(again.body.rejected).toEqual([
      expect.objectContaining({ index: 0, id: 'dup-1', code: 'ALREADY_SENT', reason: 'already sent' }),
    ]);
    // n2 has no copy: its one view of the fleet finds the message on n1.
    expect((await admin(urlOf('n2'), 'GET', '/messages/dup-1?tenant_id=acme')).body.node_id).toBe('n1');

    // Both sent (nothing waits on n1 and n2), each exactly once.
    await until(
      async () => (await waitingOn(urlOf('n1'))) === 0 && (await waitingOn(urlOf('n2'))) === 0,
      'n1 and n2 to send',
    );
    await sink.waitForMessages(2, 30_000);
    expect(Object.fromEntries(deliveries())).toEqual({ 'dup-1': 1, 'fresh-1': 1 });
  }, 90_000);

  it('queues each client id on one node only when the same request reaches three nodes at once, and delivers each once', async () => {
    const before = sink.messages.length;
    const ids = Array.from({ length: 30 }, (_, index) => `race-${index}`);
    const answers = await Promise.all(
      ['n1', 'n2', 'n3'].map((node) =>
        post(
          urlOf(node),
          ids.map((id) => message(id)),
        ),
      ),
    );
    for (const answer of answers) expect(answer.status).toBe(200);
    // Every id is taken by exactly one node; the two others answer it as a repeat.
    const queuedOn = new Map<string, number>(ids.map((id) => [id, 0]));
    for (const answer of answers) {
      const repeats = new Set(
        (answer.body.rejected as Array<{ id: string; code: string }>).map(
          (item) => (expect(item.code).toBe('ALREADY_SENT'), item.id),
        ),
      );
      for (const id of ids) if (!repeats.has(id)) queuedOn.set(id, (queuedOn.get(id) as number) + 1);
    }
    expect([...queuedOn].filter(([, count]) => count !== 1)).toEqual([]);
    expect(answers.reduce((sum, answer) => sum + (answer.body.queued as number), 0)).toBe(ids.length);
    await sink.waitForMessages(before + ids.length, 30_000);
    const counts = deliveries();
    expect(ids.filter((id) => counts.get(id) !== 1)).toEqual([]);
  }, 60_000);

  it('does not lock out an id whose claim has no message behind it (a crash between claim and commit), unless its holder cannot answer', async () => {
    // Claims as a node leaves them in the fleet's claim log when it dies between its claim and its commit.
    const nc = await connect({ servers: fleet.cluster.urls.split(',') });
    try {
      const js = jetstream(nc);
      const claim = (id: string, node: string) =>
        js.publish(
          `mailproxy_fleet_claims.${node}`,
          JSON.stringify({ kind: 'claim', node, at: Date.now(), keys: [claimKey('acme', id)] }),
        );
      await claim('orphan-1', 'n1');
      await claim('orphan-2', 'n9');
    } finally {
      await nc.close();
    }
    // n1 answers that it has no orphan-1: n3 takes the claim over and queues it.
    const taken = await post(urlOf('n3'), [message('orphan-1'), message('orphan-2')]);
    expect(taken.body.queued).toBe(1);
    // n9 never answers: it may have the message, so the id is answered as a repeat rather than risk a second send.
    expect(taken.body.rejected).toEqual([expect.objectContaining({ index: 1, id: 'orphan-2', code: 'ALREADY_SENT' })]);
    // The claim is n3's now: a repeat on n1 is a repeat.
    const repeat = await post(urlOf('n1'), [message('orphan-1')]);
    expect(repeat.body.rejected).toEqual([expect.objectContaining({ id: 'orphan-1', code: 'ALREADY_SENT' })]);
    await sink.waitForMessages(3, 30_000);
    await until(async () => (await waitingOn(urlOf('n3'))) === 0, 'n3 to send');
  }, 60_000);
});

describe('drain and leave', () => {
  const drained = Array.from({ length: 24 }, (_, index) => `drain-${index}`);

  it('moves every waiting message of n2 to n1 and n3, each delivered once; n2 refuses intake and is not reported missing', async () => {
    const n2 = urlOf('n2');
    const before = sink.messages.length;
    // Held by suspending the tenant (in a fleet the suspension reaches every node): the mail waits on n2,
    // and what n1 and n3 adopt waits there too until the tenant is activated after the drain.
    expect((await admin(n2, 'POST', '/commands/suspend', { tenant_id: 'acme' })).status).toBe(200);
    const scheduled = Math.floor(Date.now() / 1000) + 3;
    const posted = await post(
      n2,
      drained.map((id, index) => message(id, index % 8 === 0 ? { deferred_ts: scheduled } : {})),
    );
    expect(posted.body).toMatchObject({ queued: drained.length, rejected: [] });
    // Two by SMTP, relayed byte for byte: one held in its row, one large enough for the spool.
    const session = await openSubmission(fleet.nodes.find((node) => node.id === 'n2')?.smtpPort as number);
    try {
      await session.login('acme', keys.get('n2') as string);
      for (const [id, lines] of [
        ['smtp-small', 3],
        ['smtp-spooled', 8_000],
      ] as const) {
        const body = Array.from({ length: lines }, (_, line) => `line ${line} ${'x'.repeat(70)}`).join('\r\n');
        const raw = `From: app@acme.example\r\nTo: someone@example.org\r\nSubject: ${id}\r\nX-Genro-Mail-ID: ${id}\r\n\r\n${body}\r\n`;
        await session.send({ from: 'app@acme.example', to: ['someone@example.org'] }, raw);
      }
    } finally {
      session.close();
    }
    drained.push('smtp-small', 'smtp-spooled');
    expect(await waitingOn(n2)).toBe(drained.length);

    const run = await runCli(['fleet', 'drain', '--url', n2, '--token', FLEET_TOKEN, '--timeout', '90']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/phase:\s+drained/);

    // Nothing waits on n2; the others took a share each.
    expect(await waitingOn(n2)).toBe(0);
    const progress = (await admin(n2, 'GET', '/fleet/drain')).body.drain;
    expect(progress).toMatchObject({ phase: 'drained', waiting: 0, last_error: null });
    expect(progress.moved.n1 + progress.moved.n3).toBe(drained.length);
    expect(progress.moved.n1).toBeGreaterThan(0);
    expect(progress.moved.n3).toBeGreaterThan(0);

    // Intake refused with the stable code; /ready sends load balancers away.
    const refused = await post(n2, [message('after-drain')]);
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('NODE_DRAINING');
    const smtp = await openRawSmtp(fleet.nodes.find((node) => node.id === 'n2')?.smtpPort as number);
    try {
      expect(await smtp.reply(10_000)).toMatchObject({ code: 421, text: expect.stringContaining('draining') });
    } finally {
      smtp.destroy();
    }
    const ready = await api(n2, 'GET', '/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.fleet_drain).toBe('not ready');

    // Every message arrives once, by its X-Genro-Mail-ID, and nothing is left to send anywhere.
    expect((await admin(urlOf('n1'), 'POST', '/commands/activate', { tenant_id: 'acme' })).status).toBe(200);
    await sink.waitForMessages(before + drained.length, 60_000);
    await until(
      async () => (await waitingOn(urlOf('n1'))) === 0 && (await waitingOn(urlOf('n3'))) === 0,
      'n1 and n3 to send what they adopted',
    );
    const counts = deliveries();
    for (const id of drained) expect(counts.get(id), id).toBe(1);
    const spooled = sink.messages.find((received) => received.raw.includes('X-Genro-Mail-ID: smtp-spooled'));
    expect(spooled?.raw.length).toBeGreaterThan(600_000);
    expect(spooled?.raw.toString('latin1')).toContain(`line 7999 ${'x'.repeat(70)}`);
    expect(sink.messages.length).toBe(before + drained.length);

    // The adopting node's timeline says where the message came from.
    const adoptedThere = drained[0] as string;
    const timeline = (await admin(urlOf('n1'), 'GET', `/messages/${adoptedThere}?tenant_id=acme`)).body;
    const where = timeline.node_id as string;
    expect(['n1', 'n3']).toContain(where);
    expect(timeline.events.map((event: { event_type: string }) => event.event_type)).toEqual(
      expect.arrayContaining([expect.stringMatching(/adopted$/)]),
    );

    // A moved id posted to the node that does not have it is still a repeat (its claim follows the message).
    const elsewhere = where === 'n1' ? 'n3' : 'n1';
    const repeat = await post(urlOf(elsewhere), [message(adoptedThere)]);
    expect(repeat.body.rejected).toEqual([expect.objectContaining({ id: adoptedThere, code: 'ALREADY_SENT' })]);

    // n2 left: the others name it so, never missing, also once it is stopped.
    const sees = (seen: FleetStatus, liveness: string) =>
      seen.nodes.some((node) => node.node_id === 'n2' && node.liveness === liveness);
    await untilFleet(urlOf('n1'), (seen) => sees(seen, 'left') && !seen.missing.includes('n2'), 'n1 to see n2 left');
    const n2Process = fleet.nodes.find((node) => node.id === 'n2')?.daemon;
    n2Process?.child.kill('SIGTERM');
    expect((await n2Process?.exited)?.code).toBe(0);
    await untilFleet(
      urlOf('n3'),
      (seen) =>
        seen.nodes.some((node) => node.node_id === 'n2' && node.liveness === 'left' && node.seen_ms_ago > 2_000) &&
        !seen.missing.includes('n2'),
      'n3 to see n2 left well past the node timeout',
    );
  }, 120_000);
});
