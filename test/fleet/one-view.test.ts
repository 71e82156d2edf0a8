/**
 * The fleet's one view on real peers: three `mailproxy serve` nodes
 * on a three-server NATS cluster, one SMTP sink as every node's relay. A
 * message accepted on n2 is found with its timeline through n1's API and the
 * built CLI; a search through n1 pages over all three nodes without gaps or
 * duplicates; resend and delete through n1 act on n2; with n3 killed the
 * answers name n3 missing. A provider's webhook reaching n1 is applied to
 * the message n2 holds, and one no live node holds answers 503. The latest-state
 * KV keeps each node's messages under keys naming the node.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { jetstream } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';
import { FLEET_TOKEN, provisionTenant, startFleet, untilOrExplain, type TestFleet } from '../helpers/fleet.js';
import { api } from '../helpers/test-daemon.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

let fleet: TestFleet;
let sink: SmtpSink;

const admin = (url: string, method: string, path: string, body?: unknown) =>
  api(url, method, path, { token: FLEET_TOKEN, body });
const url = (id: string): string => fleet.nodes.find((node) => node.id === id)!.url;
/** Messages each node accepts: four of its own, ids naming the node. */
const idsOn = (node: string): string[] => [1, 2, 3, 4].map((n) => `${node}-m${n}`);

async function untilSent(node: string, id: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = await admin(url(node), 'GET', `/messages/${id}?tenant_id=acme`);
    if (found.body?.message?.status === 'sent') return;
    if (Date.now() > deadline) throw new Error(`${id} not sent on ${node}: ${found.text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Every page of a search through `node`, `limit` at a time. */
async function allPages(node: string, limit: number): Promise<{ ids: string[]; pages: any[] }> {
  const pages: any[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `/messages?tenant_id=acme&limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`;
    const page = await admin(url(node), 'GET', query);
    expect(page.status, page.text).toBe(200);
    pages.push(page.body);
    cursor = page.body.next_cursor;
    expect(pages.length).toBeLessThan(50);
  } while (cursor !== null);
  return { ids: pages.flatMap((page) => page.messages.map((message: any) => message.id)), pages };
}

const MAILGUN = { name: 'mailgun', signing_key: 'fleet-mailgun-signing-key-0123456789' };

/** A Mailgun webhook (HMAC-signed) telling that message `id` was delivered. */
function mailgunRequest(id: string, eventId: string): string {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const token = randomBytes(25).toString('hex');
  const signature = createHmac('sha256', MAILGUN.signing_key)
    .update(timestamp + token)
    .digest('hex');
  const eventData = {
    id: eventId,
    event: 'delivered',
    timestamp: Number(timestamp),
    recipient: 'ann@example.net',
    'user-variables': { genro_mail_id: id },
  };
  return JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': eventData });
}

async function postWebhook(node: string, body: string): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`${url(node)}/webhooks/mailgun/acme`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json' },
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), text };
}

/** Posts until the node verifies it (its accounts' providers are read again within a second of a change). */
async function untilVerified(node: string, body: string): Promise<{ status: number; body: any; text: string }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await postWebhook(node, body);
    if (answer.status !== 401 || Date.now() > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  sink = await startSmtpSink();
  fleet = await startFleet(['n1', 'n2', 'n3']);
  await provisionTenant(fleet, 'acme', { host: '127.0.0.1', port: sink.port, tls_mode: 'none' });
  for (const node of fleet.nodes) {
    const messages = idsOn(node.id).map((id) => ({
      id,
      tenant_id: 'acme',
      from: 'app@acme.example',
      to: 'ann@example.net',
      subject: `hello from ${node.id}`,
      body: id,
    }));
    const added = await admin(node.url, 'POST', '/add-messages', { messages });
    expect(added.body, added.text).toMatchObject({ ok: true, queued: 4, rejected: [] });
  }
}, 120_000);

afterAll(async () => {
  await fleet?.destroy();
  await sink?.stop();
});

describe('fleet one view', () => {
  it("finds a message accepted on n2, with its timeline, through n1's API and CLI", async () => {
    await untilSent('n2', 'n2-m1');
    const local = await admin(url('n2'), 'GET', '/messages/n2-m1?tenant_id=acme');
    const found = await admin(url('n1'), 'GET', '/messages/n2-m1?tenant_id=acme');
    expect(found.status, found.text).toBe(200);
    expect(found.body).toMatchObject({ node_id: 'n2', missing_nodes: [], message: { id: 'n2-m1', status: 'sent' } });
    expect(found.body.events.map((event: any) => event.event_type)).toEqual(
      local.body.events.map((event: any) => event.event_type),
    );
    expect(found.body.events.map((event: any) => event.event_type)).toContain('sent');

    const cli = await runCli(['messages', 'show', 'n2-m1', '--tenant', 'acme'], {
      env: { MAILPROXY_URL: url('n1'), MAILPROXY_TOKEN: FLEET_TOKEN },
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('n2-m1');
    expect(cli.stdout).toMatch(/^node:\s+n2$/m);
    expect(cli.stdout).toMatch(/events:[\s\S]*sent/);

    // The console of n1, signed in as a browser would: the message page and the list.
    const login = await fetch(`${url('n1')}/ui/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ token: FLEET_TOKEN }),
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const page = await fetch(`${url('n1')}/ui/messages/acme/n2-m1`, { headers: { cookie }, redirect: 'manual' });
    const html = await page.text();
    expect(page.status, html).toBe(200);
    expect(html).toContain('<dt>Node</dt><dd>n2</dd>');
    expect(html).toContain('hello from n2');
    expect(html).toMatch(/>sent</);
    const list = await (
      await fetch(`${url('n1')}/ui/messages?tenant=acme`, { headers: { cookie }, redirect: 'manual' })
    ).text();
    for (const id of ['n1-m1', 'n2-m1', 'n3-m4']) expect(list).toContain(`/ui/messages/acme/${id}"`);
    // The overview shows the fleet: a row per node and the total.
    const overview = await (
      await fetch(`${url('n1')}/ui/overview`, { headers: { cookie }, redirect: 'manual' })
    ).text();
    for (const node of ['n1', 'n2', 'n3', 'Fleet total']) expect(overview).toContain(`<th scope="row">${node}</th>`);
    expect(list).toContain('<th scope="col">Node</th>');

    const nowhere = await admin(url('n1'), 'GET', '/messages/nowhere?tenant_id=acme');
    expect(nowhere.status).toBe(404);
    expect(nowhere.body.error).toMatchObject({ code: 'NOT_FOUND', details: { missing_nodes: [] } });
  }, 60_000);

  it('pages a search over all three nodes without gaps or duplicates', async () => {
    const expected = ['n1', 'n2', 'n3'].flatMap(idsOn).sort();
    // (runs before the held messages of the next test are added)
    for (const limit of [3, 5]) {
      const { ids, pages } = await allPages('n1', limit);
      expect(ids.length).toBe(expected.length);
      expect([...ids].sort()).toEqual(expected);
      expect(pages.every((page) => page.messages.length <= limit && page.missing_nodes.length === 0)).toBe(true);
      expect(
        pages
          .flatMap((page) => page.messages.map((message: any) => message.node_id))
          .filter((node: string) => node === 'n3').length,
      ).toBe(4);
    }
  }, 60_000);

  it("shows each node's queue and the fleet's total in n1's /status and /metrics", async () => {
    // Scheduled a day ahead on n3 only: waiting messages that stay put while they are counted.
    const later = Math.floor(Date.now() / 1000) + 86_400;
    const held = [1, 2].map((n) => ({
      id: `held-${n}`,
      tenant_id: 'acme',
      from: 'app@acme.example',
      to: 'ann@example.net',
      subject: 'held',
      body: 'held',
      deferred_ts: later,
    }));
    const added = await admin(url('n3'), 'POST', '/add-messages', { messages: held });
    expect(added.body, added.text).toMatchObject({ queued: 2 });
    const status = await admin(url('n1'), 'GET', '/status');
    expect(status.status, status.text).toBe(200);
    const fleetPart = status.body.fleet;
    expect(fleetPart.missing_nodes).toEqual([]);
    const waitingOf = (node: string): number =>
      fleetPart.nodes.find((seen: any) => seen.node_id === node).queue.waiting;
    expect(waitingOf('n3')).toBeGreaterThanOrEqual(2);
    expect(fleetPart.queue_total.waiting).toBe(waitingOf('n1') + waitingOf('n2') + waitingOf('n3'));

    const metrics = await admin(url('n1'), 'GET', '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/mailproxy_fleet_node_waiting_messages\{node="n3",status="(queued|deferred)"\} [2-9]/);
    expect(metrics.text).toContain('mailproxy_fleet_node_answered{node="n2"} 1');
    expect(metrics.text).toMatch(/mailproxy_fleet_waiting_messages\{status="(queued|deferred)"\} [2-9]/);
  }, 60_000);

  it('resends and deletes through n1 a message that n2 holds', async () => {
    await untilSent('n2', 'n2-m2');
    await sink.waitForMessages(1);
    const before = sink.messages.filter((message) => message.raw.toString().includes('n2-m2')).length;
    const resent = await admin(url('n1'), 'POST', '/commands/resend', { tenant_id: 'acme', ids: ['n2-m2', 'ghost'] });
    expect(resent.status, resent.text).toBe(200);
    expect(resent.body).toMatchObject({ ok: true, resent: ['n2-m2'], not_found: ['ghost'], missing_nodes: [] });
    expect(resent.body.nodes.n2.resent).toEqual(['n2-m2']);
    expect(resent.body.nodes.n1.resent).toEqual([]);
    const deadline = Date.now() + 30_000;
    while (sink.messages.filter((message) => message.raw.toString().includes('n2-m2')).length === before) {
      if (Date.now() > deadline) throw new Error('n2-m2 was not sent again');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    await untilSent('n2', 'n2-m3');
    const deleted = await admin(url('n1'), 'POST', '/commands/delete-messages', { tenant_id: 'acme', ids: ['n2-m3'] });
    expect(deleted.body, deleted.text).toMatchObject({
      ok: true,
      deleted: ['n2-m3'],
      not_found: [],
      missing_nodes: [],
    });
    expect((await admin(url('n2'), 'GET', '/messages/n2-m3?tenant_id=acme')).status).toBe(404);
  }, 60_000);

  it('erases through n1 a message that n2 holds, and names the ids no node has', async () => {
    const added = await admin(url('n2'), 'POST', '/add-messages', {
      messages: [
        {
          id: 'erase-on-n2',
          tenant_id: 'acme',
          from: 'app@acme.example',
          to: 'eve@example.net',
          subject: 'for Eve',
          body: 'x',
        },
      ],
    });
    expect(added.body, added.text).toMatchObject({ ok: true, queued: 1 });
    const erased = await admin(url('n1'), 'POST', '/commands/erase', {
      tenant_id: 'acme',
      ids: ['erase-on-n2', 'ghost'],
    });
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body).toMatchObject({
      ok: true,
      erased_messages: 1,
      not_found: ['ghost'],
      tenants: ['acme'],
      missing_nodes: [],
    });
    expect(erased.body.nodes.n2.erased_messages).toBe(1);
    expect(erased.body.nodes.n1.erased_messages).toBe(0);
    const detail = await admin(url('n2'), 'GET', '/messages/erase-on-n2?tenant_id=acme');
    expect(detail.body.message).toMatchObject({ rcpt_to: [], subject: null, erased_ts: expect.any(Number) });
  }, 60_000);

  it('resends through a JetStream command the messages of every node, whichever node takes the command', async () => {
    // One command naming a message of each node: the consumer is shared, so any node may take it.
    const named = ['n1-m4', 'n2-m4', 'n3-m4'];
    for (const id of named) await untilSent(id.slice(0, 2), id);
    const copies = (id: string): number =>
      sink.messages.filter((message) => message.raw.toString().includes(id)).length;
    const before = new Map(named.map((id) => [id, copies(id)]));
    const nc = await connect({ servers: fleet.cluster.urls.split(',') });
    try {
      await jetstream(nc).publish(
        'mailproxy.commands.acme.resend',
        new TextEncoder().encode(JSON.stringify({ ids: named })),
      );
    } finally {
      await nc.close();
    }
    await eventually(
      () => named.every((id) => copies(id) > (before.get(id) ?? 0)),
      `${named.join(', ')} to be sent again`,
      30_000,
    );
  }, 60_000);

  it("keeps each node's messages apart in the latest-state KV: a pk is one node's, so its key names the node", async () => {
    for (const node of ['n1', 'n2', 'n3']) await untilSent(node, `${node}-m1`);
    const nc = await connect({ servers: fleet.cluster.urls.split(',') });
    try {
      const kv = await new Kvm(nc).create('mailproxy_latest');
      for (const node of ['n1', 'n2', 'n3']) {
        const pk = (await admin(url(node), 'GET', `/messages/${node}-m1?tenant_id=acme`)).body.message.pk as number;
        const latest = async () => (await kv.get(`acme.${node}.${pk}`))?.json<{ handoff_state: string }>() ?? null;
        await eventually(
          async () => (await latest())?.handoff_state === 'sent',
          `${node}-m1's latest state to be sent`,
          20_000,
        );
        expect(await latest(), node).toMatchObject({ message_id: `${node}-m1`, message_pk: pk, handoff_state: 'sent' });
      }
      // Without the node in the key, the nodes' first messages (pk 1 on each) would share `acme.1`.
      expect(await kv.get('acme.1')).toBeNull();
    } finally {
      await nc.close();
    }
  }, 60_000);

  it("applies a provider's webhook that reaches n1 to the message n2 holds", async () => {
    const saved = await admin(url('n1'), 'POST', '/account', {
      id: 'main',
      tenant_id: 'acme',
      host: '127.0.0.1',
      port: sink.port,
      tls_mode: 'none',
      provider: MAILGUN,
    });
    expect(saved.status, saved.text).toBe(200);
    // Shared configuration: every node serves the account's provider, read again within a second.
    const answer = await untilVerified('n1', mailgunRequest('n2-m2', 'ev-fleet-1'));
    expect(answer.body, answer.text).toMatchObject({ ok: true, applied: 1, duplicates: 0, unmatched: 0 });
    const found = await admin(url('n1'), 'GET', '/messages/n2-m2?tenant_id=acme');
    expect(found.body).toMatchObject({ node_id: 'n2', message: { provider_state: 'delivered' } });
    expect(found.body.events.map((event: any) => event.event_type)).toContain('delivered');
    // Delivered again to another node: applied once.
    const again = await postWebhook('n3', mailgunRequest('n2-m2', 'ev-fleet-1'));
    expect(again.body, again.text).toMatchObject({ applied: 0, duplicates: 1 });
    const nowhere = await postWebhook('n1', mailgunRequest('no-such-message', 'ev-fleet-2'));
    expect(nowhere.body, nowhere.text).toMatchObject({ applied: 0, unmatched: 1 });
  }, 60_000);

  it('unsubscribes fleet-wide by a link that reaches n1, recording it on the message n2 holds', async () => {
    const setting = { base_url: 'https://mail.example.com', scope: 'batches' };
    expect((await admin(url('n1'), 'PUT', '/tenant/acme', { list_unsubscribe: setting })).status).toBe(200);
    // Shared configuration: n2 relays with the link once it has the tenant's new row.
    await untilOrExplain(
      fleet,
      async () => (await admin(url('n2'), 'GET', '/tenant/acme')).body?.tenant?.list_unsubscribe !== null,
      'n2 has the setting',
      20_000,
    );
    const news = { id: 'n2-news', tenant_id: 'acme', from: 'app@acme.example', to: 'bea@example.net' };
    const added = await admin(url('n2'), 'POST', '/add-messages', {
      messages: [{ ...news, subject: 'news', body: 'news', batch_code: 'weekly' }],
    });
    expect(added.body, added.text).toMatchObject({ queued: 1 });
    await untilSent('n2', 'n2-news');
    const raw = sink.messages.find((mail) => mail.raw.includes('X-Genro-Mail-ID: n2-news\r\n'))?.raw.toString() ?? '';
    const token = /^List-Unsubscribe: <https:\/\/mail\.example\.com\/unsubscribe\/([^>]+)>/m.exec(raw)?.[1];
    expect(token, raw.slice(0, 2000)).toBeDefined();

    const done = await fetch(`${url('n1')}/unsubscribe/${token}`, {
      method: 'POST',
      body: 'List-Unsubscribe=One-Click',
    });
    expect(done.status).toBe(200);
    // On every node's list (n3 took no part), and on the message's timeline where n2 keeps it.
    await untilOrExplain(
      fleet,
      async () => {
        const listed = await admin(url('n3'), 'GET', '/suppressions?tenant_id=acme&address=bea@example.net');
        return listed.body?.suppressions?.[0]?.source === 'unsubscribe';
      },
      'n3 lists the unsubscribe',
      20_000,
    );
    const found = await admin(url('n1'), 'GET', '/messages/n2-news?tenant_id=acme');
    expect(found.body.node_id).toBe('n2');
    expect(found.body.events.map((event: any) => event.event_type)).toContain('unsubscribed');
    // n3 refuses new mail to the recipient.
    const refused = await admin(url('n3'), 'POST', '/add-messages', {
      messages: [{ ...news, id: 'n3-after', subject: 'again', body: 'again' }],
    });
    expect(refused.body.rejected).toMatchObject([{ id: 'n3-after', reason: 'suppressed' }]);
  }, 60_000);

  it('names n3 missing once it is killed', async () => {
    fleet.nodes.find((node) => node.id === 'n3')!.daemon.child.kill('SIGKILL');
    const { ids, pages } = await allPages('n1', 5);
    expect(pages.every((page) => page.missing_nodes.includes('n3'))).toBe(true);
    expect(ids.some((id) => id.startsWith('n3-'))).toBe(false);
    expect(ids.filter((id) => id.startsWith('n2-')).sort()).toEqual(['n2-m1', 'n2-m2', 'n2-m4', 'n2-news']);
    expect(ids.some((id) => id.startsWith('held-'))).toBe(false);

    const detail = await admin(url('n1'), 'GET', '/messages/n3-m1?tenant_id=acme');
    expect(detail.status).toBe(404);
    expect(detail.body.error.details.missing_nodes).toEqual(['n3']);
    const deleted = await admin(url('n1'), 'POST', '/commands/delete-messages', { tenant_id: 'acme', ids: ['n3-m1'] });
    expect(deleted.body, deleted.text).toMatchObject({
      ok: true,
      deleted: [],
      not_found: ['n3-m1'],
      missing_nodes: ['n3'],
    });
    expect(Object.keys(deleted.body.nodes).sort()).toEqual(['n1', 'n2']);
    const status = await admin(url('n1'), 'GET', '/status');
    expect(status.body.fleet.missing_nodes).toEqual(['n3']);
    expect(status.body.fleet.nodes.find((seen: any) => seen.node_id === 'n3').queue).toBeNull();
    expect((await admin(url('n1'), 'GET', '/metrics')).text).toContain('mailproxy_fleet_node_answered{node="n3"} 0');
    // A provider event no live node holds may be n3's: 503, so that the provider delivers it again later.
    const unsure = await postWebhook('n1', mailgunRequest('n3-m1', 'ev-fleet-3'));
    expect(unsure.status, unsure.text).toBe(503);
    expect(unsure.body.error.details.reason).toBe('webhook_fleet_incomplete');
  }, 60_000);
});
