/**
 * The MCP server with the SDK's own client, against a running daemon relaying to a real sink:
 * over Streamable HTTP at POST /mcp (a tenant key, another tenant's, the admin token, none) and
 * over stdio (`mailproxy mcp`, the built CLI as a child process). Every tool's happy path, a
 * tenant's refusal for another's data (the same answer as an unknown id), the bulk action's
 * confirm step, read-only mode, resources and prompts.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/daemon-process.js';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const run = promisify(execFile);
/** The MCP Inspector's command (`mcp-inspector`), run in its CLI mode. */
const INSPECTOR = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector/package.json')),
  'cli/build/cli.js',
);

let fx: QueueFixture;
let sink: SmtpSink;
let acme: string;
let other: string;
const clients: Client[] = [];

async function connect(token: string | null, url = fx.t.url): Promise<Client> {
  const client = new Client({ name: 'mailproxy-test', version: '1.0.0' });
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

/** A tool's structured answer; throws with its text when the tool answered an error. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError === true) throw new Error(JSON.stringify(result.content));
  return result.structuredContent;
}

/** The URIs `client` is told changed; `next(uri)` resolves when that one is. */
function updates(client: Client) {
  const heard: string[] = [];
  const waiting = new Map<string, () => void>();
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    heard.push(notification.params.uri);
    waiting.get(notification.params.uri)?.();
  });
  return {
    heard,
    next: (uri: string) => new Promise<void>((resolve) => waiting.set(uri, resolve)),
  };
}

/** What a refused subscription says. */
const refusal = (client: Client, uri: string): Promise<string> =>
  client.subscribeResource({ uri }).then(
    () => 'subscribed',
    (error: Error) => error.message,
  );

const errorText = async (client: Client, name: string, args: Record<string, unknown>): Promise<string> => {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name} should refuse`).toBe(true);
  return (result.content as Array<{ text: string }>)[0]?.text ?? '';
};

beforeAll(async () => {
  sink = await startSmtpSink();
  fx = await startQueueFixture({ extraToml: '[mcp]\nenabled = true\nwatch_interval_seconds = 0.2\n' });
  acme = await fx.createTenant('acme');
  other = await fx.createTenant('other');
  await fx.createAccount('acme', 'main', sink, { is_default: true });
  await fx.createAccount('other', 'main', sink, { is_default: true });
}, 60_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await fx?.stop();
  fx?.t.cleanup();
  await sink?.stop();
});

describe('the MCP server over Streamable HTTP', () => {
  it('lists its tools, marked by what they change, its resources and its prompts', async () => {
    const client = await connect(acme);
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()].sort()).toEqual(
      [
        'activate',
        'add_suppression',
        'bounce_records',
        'bulk_action',
        'list_accounts',
        'list_suppressions',
        'message_status',
        'outcome_summary',
        'queue_status',
        'remove_suppression',
        'resend',
        'retry_now',
        'search_messages',
        'send_messages',
        'suspend',
        'test_account',
      ].sort(),
    );
    expect(byName.get('message_status')?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.get('resend')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    // The API's own schema: a message's fields, described.
    expect(JSON.stringify(byName.get('send_messages')?.inputSchema)).toContain('"subject"');
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate).sort()).toEqual([
      'mailproxy://messages/{id}',
      'mailproxy://tenants/{tenant_id}/messages/{id}',
    ]);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name).sort()).toEqual(['investigate_message', 'summarise_bounces']);
  });

  it('sends, follows and finds a message; reads the queue, the accounts, a resource and a prompt', async () => {
    const client = await connect(acme);
    const sent = await call(client, 'send_messages', { messages: [message('mcp-1', { batch_code: 'weekly' })] });
    expect(sent).toMatchObject({ ok: true, queued: 1 });
    await fx.settle();
    expect(sink.messages.some((mail) => mail.raw.includes('X-Genro-Mail-ID: mcp-1'))).toBe(true);
    const status = await call(client, 'message_status', { id: 'mcp-1' });
    expect(status.message).toMatchObject({ id: 'mcp-1', status: 'sent' });
    expect(status.events.map((event: { event_type: string }) => event.event_type)).toContain('sent');
    const found = await call(client, 'search_messages', { batch_code: 'weekly' });
    expect(found.messages.map((item: { id: string }) => item.id)).toEqual(['mcp-1']);
    expect(await call(client, 'queue_status')).toHaveProperty('queue');
    expect((await call(client, 'list_accounts')).accounts).toHaveLength(1);
    // No bounce mailbox here: the list is empty, and it is the API's answer.
    expect(await call(client, 'bounce_records')).toEqual({ bounces: [], next: null });
    expect(await call(client, 'test_account', { id: 'main' })).toMatchObject({ ok: true });
    const resource = await client.readResource({ uri: 'mailproxy://messages/mcp-1' });
    expect(JSON.parse((resource.contents[0] as { text: string }).text).message.id).toBe('mcp-1');
    const admin = await connect(fx.t.adminToken);
    const named = await admin.readResource({ uri: 'mailproxy://tenants/acme/messages/mcp-1' });
    expect(JSON.parse((named.contents[0] as { text: string }).text).message.id).toBe('mcp-1');
    // The period's outcomes, counted: this message sent, another tenant's mail not counted.
    expect((await fx.post(other, [message('theirs')])).status).toBe(200);
    const since = Math.floor(fx.clock.now() / 1000) - 3600;
    expect(await call(client, 'outcome_summary', { from_ts: since })).toMatchObject({
      counted: 1,
      complete: true,
      by_status: { sent: 1 },
    });
    const prompt = await client.getPrompt({ name: 'investigate_message', arguments: { id: 'mcp-1' } });
    expect(JSON.stringify(prompt.messages)).toContain('mcp-1');
  });

  it('changes what a tenant may change: retry, resend, suspend and activate, suppressions', async () => {
    const client = await connect(acme);
    await call(client, 'send_messages', { messages: [message('mcp-2')] });
    await fx.settle();
    expect(await call(client, 'resend', { ids: ['mcp-2'] })).toMatchObject({ ok: true });
    expect(await call(client, 'retry_now', { ids: ['mcp-2'] })).toMatchObject({ ok: true });
    expect(await call(client, 'suspend', { batch_code: 'weekly' })).toMatchObject({ ok: true });
    expect(await call(client, 'activate', { batch_code: 'weekly' })).toMatchObject({ ok: true });
    await call(client, 'add_suppression', { address: 'gone@example.net', reason: 'asked by phone' });
    expect((await call(client, 'list_suppressions')).suppressions).toMatchObject([
      { address: 'gone@example.net', source: 'manual' },
    ]);
    await call(client, 'remove_suppression', { address: 'gone@example.net' });
    expect((await call(client, 'list_suppressions')).suppressions).toEqual([]);
  });

  it("answers another tenant's message as an unknown one, and the admin token reaches every tenant", async () => {
    const stranger = await connect(other);
    const theirs = await errorText(stranger, 'message_status', { id: 'mcp-1' });
    const nobodys = await errorText(stranger, 'message_status', { id: 'no-such-message' });
    expect(theirs).toBe(nobodys.replace('no-such-message', 'mcp-1'));
    expect(theirs).toMatch(/^NOT_FOUND/);
    expect(await errorText(stranger, 'message_status', { id: 'mcp-1', tenant_id: 'acme' })).toMatch(/^NOT_FOUND/);
    const admin = await connect(fx.t.adminToken);
    expect((await call(admin, 'message_status', { id: 'mcp-1', tenant_id: 'acme' })).message.id).toBe('mcp-1');
  });

  it('acts in bulk only with the token its dry run answered, for the same parameters', async () => {
    const client = await connect(acme);
    const dry = await call(client, 'bulk_action', { action: 'resend', batch_code: 'weekly' });
    expect(dry).toMatchObject({ dry_run: true, matching: 1 });
    expect(typeof dry.confirm_token).toBe('string');
    const changed = await errorText(client, 'bulk_action', {
      action: 'delete',
      batch_code: 'weekly',
      confirm_token: dry.confirm_token,
    });
    expect(changed).toMatch(/confirm_token/);
    // Another caller cannot use it either.
    const admin = await connect(fx.t.adminToken);
    expect(
      await errorText(admin, 'bulk_action', {
        action: 'resend',
        batch_code: 'weekly',
        confirm_token: dry.confirm_token,
      }),
    ).toMatch(/confirm_token/);
    const done = await call(client, 'bulk_action', {
      action: 'resend',
      batch_code: 'weekly',
      confirm_token: dry.confirm_token,
    });
    expect(done).toMatchObject({ dry_run: false, done: 1 });
  });

  it("notifies a subscribed message's change on the session's stream; the session is its credential's", async () => {
    const client = await connect(acme);
    expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true);
    await call(client, 'suspend', { batch_code: 'held' });
    await call(client, 'send_messages', { messages: [message('mcp-watched', { batch_code: 'held' })] });
    const told = updates(client);
    await client.subscribeResource({ uri: 'mailproxy://messages/mcp-watched' });
    await client.subscribeResource({ uri: 'mailproxy://accounts' });
    const changed = told.next('mailproxy://messages/mcp-watched');
    await call(client, 'activate', { batch_code: 'held' });
    await fx.settle();
    await changed;
    expect((await call(client, 'message_status', { id: 'mcp-watched' })).message.status).toBe('sent');
    // Unsubscribed, it is told no more (the accounts, still subscribed, stand for the watch's next beats).
    await client.unsubscribeResource({ uri: 'mailproxy://messages/mcp-watched' });
    await call(client, 'resend', { ids: ['mcp-watched'] });
    await fx.settle();
    const accounts = told.next('mailproxy://accounts');
    await call(client, 'test_account', { id: 'main' });
    await accounts;
    expect(told.heard.filter((uri) => uri === 'mailproxy://messages/mcp-watched')).toHaveLength(1);

    // Another tenant cannot subscribe to it: the same refusal as an unknown id's.
    const stranger = await connect(other);
    const theirs = await refusal(stranger, 'mailproxy://messages/mcp-watched');
    const nobodys = await refusal(stranger, 'mailproxy://messages/no-such-message');
    expect(theirs).toMatch(/NOT_FOUND/);
    expect(theirs).toBe(nobodys.replaceAll('no-such-message', 'mcp-watched'));
    // A session's id is no credential: with another's key it is unknown.
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId ?? '';
    expect(sessionId).not.toBe('');
    const request = (token: string) =>
      fetch(`${fx.t.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-06-18',
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    expect((await request(other)).status).toBe(404);
    expect((await request(acme)).status).toBe(200);
  });

  it('refuses a request without a valid credential, before any tool', async () => {
    await expect(connect(null)).rejects.toThrow(/UNAUTHORIZED/);
    await expect(connect(`mpk_${'x'.repeat(43)}`)).rejects.toThrow(/UNAUTHORIZED/);
    const raw = await fetch(`${fx.t.url}/mcp`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(raw.status).toBe(401);
    const answer = await fetch(`${fx.t.url}/mcp`, { method: 'GET', headers: { authorization: `Bearer ${acme}` } });
    expect(answer.status).toBe(405);
    // A session that does not exist (or lives on another node) is the SDK's 404: the client initializes again.
    const unknown = await fetch(`${fx.t.url}/mcp`, {
      method: 'GET',
      headers: { authorization: `Bearer ${acme}`, 'mcp-session-id': 'no-such-session', accept: 'text/event-stream' },
    });
    expect(unknown.status).toBe(404);
    // Only /mcp itself: a path that merely starts so is the API's (no such route).
    const beside = await fetch(`${fx.t.url}/mcpx`, { method: 'POST', headers: { authorization: `Bearer ${acme}` } });
    expect(beside.status).toBe(404);
  });
});

describe("the MCP Inspector's CLI mode", () => {
  /**
   * The Inspector's command in its CLI mode, as a child process. Its CLI sends no headers to a URL,
   * so it reaches the daemon as a desktop client does: through `mailproxy mcp` with a tenant key.
   */
  const inspect = async (...args: string[]): Promise<string> => {
    const { stdout } = await run(process.execPath, [
      INSPECTOR,
      '--cli',
      '-e',
      `MAILPROXY_URL=${fx.t.url}`,
      '-e',
      `MAILPROXY_TOKEN=${acme}`,
      process.execPath,
      CLI,
      'mcp',
      ...args,
    ]).catch((error: { stderr?: string; stdout?: string }) => {
      throw new Error(`the Inspector failed: ${error.stderr ?? ''} ${error.stdout ?? ''}`);
    });
    return stdout;
  };

  it('lists the tools and calls one against the daemon', async () => {
    expect((await fx.post(acme, [message('inspected')])).status).toBe(200);
    const listed = JSON.parse(await inspect('--method', 'tools/list')) as { tools: Array<{ name: string }> };
    expect(listed.tools.map((tool) => tool.name)).toContain('message_status');
    const called = JSON.parse(
      await inspect('--method', 'tools/call', '--tool-name', 'message_status', '--tool-arg', 'id=inspected'),
    ) as { structuredContent: { message: { id: string } } };
    expect(called.structuredContent.message.id).toBe('inspected');
  });
});

describe('the MCP server read-only and rate-limited, and over stdio', () => {
  let limited: QueueFixture;
  let limitedKey: string;

  beforeAll(async () => {
    limited = await startQueueFixture({
      extraToml: '[mcp]\nenabled = true\nread_only = true\ncalls_per_minute = 3\n',
    });
    limitedKey = await limited.createTenant('acme');
    await limited.createTenant('other');
  }, 60_000);

  afterAll(async () => {
    await limited?.stop();
    limited?.t.cleanup();
  });

  it('offers only the tools that read when read_only is set', async () => {
    const client = await connect(limitedKey, limited.t.url);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names.sort()).toEqual(
      [
        'bounce_records',
        'list_accounts',
        'list_suppressions',
        'message_status',
        'outcome_summary',
        'queue_status',
        'search_messages',
        'test_account',
      ].sort(),
    );
    const refused = await client.callTool({ name: 'send_messages', arguments: { messages: [message('x')] } });
    expect(refused.isError).toBe(true);
    expect((await limited.admin('GET', '/messages?tenant_id=acme')).body.messages).toEqual([]);
  });

  it("limits a credential's calls a minute, with the seconds to wait, and no one else's", async () => {
    const client = await connect(limitedKey, limited.t.url);
    await call(client, 'queue_status');
    await call(client, 'list_suppressions');
    await client.readResource({ uri: 'mailproxy://queue' });
    const refused = await client.callTool({ name: 'queue_status', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({
      error: { code: 'RATE_LIMITED', details: { retry_after_seconds: 20 } },
    });
    await expect(client.readResource({ uri: 'mailproxy://queue' })).rejects.toThrow(/RATE_LIMITED/);
    // Another credential (and the API itself) is not held back by this one.
    const other = await connect(await limited.createTenant('third'), limited.t.url);
    expect(await call(other, 'queue_status')).toHaveProperty('queue');
    expect((await limited.admin('GET', '/status')).status).toBe(200);
    // A call's worth comes back after 20 s of the daemon's clock.
    limited.clock.advance(20_000);
    expect(await call(client, 'queue_status')).toHaveProperty('queue');
    expect((await client.callTool({ name: 'queue_status', arguments: {} })).isError).toBe(true);
  });

  it('serves the same tools over stdio through `mailproxy mcp`, as the key it is given', async () => {
    const client = new Client({ name: 'mailproxy-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', '--watch-seconds', '1'],
        env: { MAILPROXY_URL: fx.t.url, MAILPROXY_TOKEN: acme, PATH: process.env.PATH ?? '' },
        stderr: 'pipe',
      }),
    );
    clients.push(client);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('bulk_action');
    expect((await call(client, 'message_status', { id: 'mcp-1' })).message.id).toBe('mcp-1');
    const stranger = await errorText(client, 'message_status', { id: 'mcp-1', tenant_id: 'other' });
    expect(stranger).toMatch(/^NOT_FOUND/);
    // Subscriptions too: the process reads the resource again and tells of its change.
    const told = updates(client);
    await client.subscribeResource({ uri: 'mailproxy://messages/mcp-1' });
    const changed = told.next('mailproxy://messages/mcp-1');
    await call(client, 'resend', { ids: ['mcp-1'] });
    await fx.settle();
    await changed;
    expect(told.heard).toContain('mailproxy://messages/mcp-1');
  });
});
