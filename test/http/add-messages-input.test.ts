import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { api, type ApiResponse } from '../helpers/test-daemon.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const MAX_MESSAGE_BYTES = 10_000;
const SUPPRESSED = 'blocked@example.net';
const ROUTES = ['/add-messages', '/commands/add-messages'] as const;

let fx: QueueFixture;
let sink: SmtpSink;
const keys = new Map<string, string>();
/** A tenant's API key, as issued in beforeAll. */
function keyOf(tenantId: string): string {
  const key = keys.get(tenantId);
  if (key === undefined) throw new Error(`no API key for tenant ${tenantId}`);
  return key;
}

/** Any request of this file: a 500 is always a failure, whatever the case expects. */
async function call(
  method: string,
  path: string,
  options: { as?: string; body?: unknown; headers?: Record<string, string> | undefined } = {},
): Promise<ApiResponse> {
  const token = options.as === undefined || options.as === 'admin' ? fx.t.adminToken : keyOf(options.as);
  const response = await api(fx.t.url, method, path, { token, body: options.body, headers: options.headers });
  expect(response.status, response.text).toBeLessThan(500);
  return response;
}

const detailStatus = async (tenantId: string, id: string): Promise<number> =>
  (await call('GET', `/messages/${encodeURIComponent(id)}?tenant_id=${tenantId}`)).status;

function expectErrorEnvelope(response: ApiResponse, status: number, code: string): void {
  expect(response.status, response.text).toBe(status);
  expect(response.body).toMatchObject({ error: { code, message: expect.any(String) } });
  expect(Object.keys(response.body.error).sort()).toEqual(['code', 'details', 'message']);
}

/** A message that waits an hour, so commands find it waiting rather than sent or in flight. */
const later = (id: string, extra: Record<string, unknown> = {}) =>
  message(id, { deferred_ts: Math.floor(Date.now() / 1000) + 3600, ...extra });

beforeAll(async () => {
  sink = await startSmtpSink();
  fx = await startQueueFixture({ extraToml: `[http]\nmax_message_bytes = ${MAX_MESSAGE_BYTES}\n` });
  keys.set('acme', await fx.createTenant('acme'));
  await fx.createAccount('acme', 'main', sink);
  keys.set('other', await fx.createTenant('other'));
  await fx.createAccount('other', 'main', sink);
  keys.set('twoacc', await fx.createTenant('twoacc'));
  // Saved with is_default false: a tenant's first account would otherwise become its default.
  await fx.createAccount('twoacc', 'a1', sink, { is_default: false });
  await fx.createAccount('twoacc', 'a2', sink);

  const seeded = await fx.post(keyOf('other'), [later('other-1', { subject: 'untouched' })]);
  expect(seeded.body).toMatchObject({ queued: 1, rejected: [] });

  // Through the API: the store digests and seals the address, which a row written by hand could not.
  const added = await fx.admin('POST', '/suppression', { tenant_id: 'acme', address: SUPPRESSED, reason: 'test' });
  expect(added.status).toBe(201);
});

afterAll(async () => {
  await fx?.stop();
  fx?.t.cleanup();
  await sink?.stop();
});

/** other-1 is exactly as seeded: same subject, still deferred, never updated. */
async function expectOtherUntouched(): Promise<void> {
  const { message: stored, events } = await fx.detail('other', 'other-1');
  expect(stored).toMatchObject({ subject: 'untouched', state: 'deferred', status: 'deferred', suspended: false });
  expect(events.map((event) => event.event_type)).toEqual(['queued']);
}

interface MessageCase {
  name: string;
  /** Who posts: a tenant key by tenant id, or the admin token. */
  as?: string;
  bad: (id: string) => Record<string, unknown>;
  reason: string;
  /** The rejection's stable code; INVALID_MESSAGE when not given. */
  code?: string;
  /** Tenants in which the rejected id must not exist. */
  absentIn?: string[];
  /** What reading the rejected id answers: 404, or 400 when the id itself is invalid. */
  lookup?: number;
  /** Valid siblings; admin posts must name the tenant. */
  sibling?: (id: string) => Record<string, unknown>;
}

const MESSAGE_CASES: MessageCase[] = [
  { name: 'missing from', bad: (id) => ({ ...message(id), from: undefined }), reason: 'from: Invalid input' },
  { name: 'no recipient at all', bad: (id) => ({ ...message(id), to: undefined }), reason: 'at least one recipient' },
  { name: 'empty recipient list', bad: (id) => message(id, { to: [] }), reason: 'at least one recipient' },
  {
    name: 'bad address in the to list',
    bad: (id) => message(id, { to: ['ok@example.net', 'not an address'] }),
    reason: 'to.1: invalid address',
  },
  { name: 'to as a number', bad: (id) => message(id, { to: 42 }), reason: 'to: Invalid input' },
  {
    name: 'CR/LF in subject',
    bad: (id) => message(id, { subject: 'hello\r\nBcc: victim@example.org' }),
    reason: 'subject: must not contain CR, LF or NUL',
  },
  {
    name: 'lone surrogate in subject (JSON \\ud800)',
    bad: (id) => message(id, { subject: 'a\ud800b' }),
    reason: 'subject: not well-formed Unicode (a lone surrogate)',
  },
  {
    name: 'LF in a custom header value',
    bad: (id) => message(id, { headers: { 'X-Custom': 'a\nBcc: victim@example.org' } }),
    reason: 'headers.X-Custom: must not contain CR, LF or NUL',
  },
  {
    name: 'header name with a colon',
    bad: (id) => message(id, { headers: { 'X-Bad:Name': 'v' } }),
    reason: 'headers.X-Bad:Name: Invalid key',
  },
  {
    name: 'oversized body',
    bad: (id) => message(id, { body: 'x'.repeat(2 * MAX_MESSAGE_BYTES) }),
    reason: 'too large',
  },
  {
    name: 'unknown account_id',
    bad: (id) => message(id, { account_id: 'nope' }),
    reason: 'unknown account',
    code: 'UNKNOWN_ACCOUNT',
  },
  {
    name: 'tenant with two accounts, none default, and no account_id',
    as: 'admin',
    bad: (id) => message(id, { tenant_id: 'twoacc' }),
    sibling: (id) => message(id, { tenant_id: 'twoacc', account_id: 'a1' }),
    reason: 'account_id is required',
    code: 'NO_DEFAULT_ACCOUNT',
    absentIn: ['twoacc', 'acme'],
  },
  { name: 'priority 7', bad: (id) => message(id, { priority: 7 }), reason: 'priority: Too big' },
  { name: 'priority "urgent"', bad: (id) => message(id, { priority: 'urgent' }), reason: 'priority: Invalid input' },
  {
    name: 'deferred_ts "tomorrow"',
    bad: (id) => message(id, { deferred_ts: 'tomorrow' }),
    reason: 'deferred_ts: Invalid input: expected number',
  },
  { name: 'batch_code "*"', bad: (id) => message(id, { batch_code: '*' }), reason: 'batch_code: "*" is reserved' },
  { name: 'unknown field', bad: (id) => message(id, { surprise: true }), reason: 'surprise: unknown field' },
  {
    name: 'base64 attachment that is not base64',
    bad: (id) =>
      message(id, { attachments: [{ filename: 'a.bin', fetch_mode: 'base64', storage_path: 'not*base64!' }] }),
    reason: 'attachments.0.storage_path: not valid base64',
  },
  {
    name: 'http_url attachment with ftp://',
    bad: (id) =>
      message(id, {
        attachments: [{ filename: 'a.pdf', fetch_mode: 'http_url', storage_path: 'ftp://files.example/a.pdf' }],
      }),
    reason: 'not an http(s) URL',
  },
  {
    name: 'tenant key naming another tenant',
    bad: (id) => message(id, { tenant_id: 'other' }),
    reason: 'unknown tenant',
    code: 'UNKNOWN_TENANT',
    absentIn: ['acme', 'other'],
  },
  {
    name: 'admin token naming an unknown tenant',
    as: 'admin',
    bad: (id) => message(id, { tenant_id: 'nobody' }),
    reason: 'unknown tenant',
    code: 'UNKNOWN_TENANT',
  },
  {
    name: 'admin token without tenant_id',
    as: 'admin',
    bad: (id) => message(id),
    reason: 'tenant_id is required',
    code: 'TENANT_REQUIRED',
  },
  {
    name: 'id with a space',
    bad: () => message('has space'),
    reason: 'id: printable ASCII without spaces',
    lookup: 400,
  },
  {
    name: 'suppressed recipient (cc, display name, mixed case)',
    bad: (id) => message(id, { cc: `Blocked <${SUPPRESSED.replace('b', 'B').replace('example', 'Example')}>` }),
    reason: 'suppressed',
    code: 'SUPPRESSED',
  },
];

describe.each(ROUTES)('POST %s: one bad message among valid ones', (route) => {
  const tag = route === '/add-messages' ? 'am' : 'cam';

  it.each(MESSAGE_CASES.map((testCase, index) => ({ ...testCase, index })))(
    '$name → 200, rejected with "$reason"',
    async (testCase) => {
      const as = testCase.as ?? 'acme';
      const sibling =
        testCase.sibling ?? ((id: string) => (as === 'admin' ? message(id, { tenant_id: 'acme' }) : message(id)));
      const siblingTenant = (sibling('x').tenant_id as string | undefined) ?? 'acme';
      const before = `${tag}-${testCase.index}-a`;
      const after = `${tag}-${testCase.index}-b`;
      const bad = testCase.bad(`${tag}-${testCase.index}-bad`);
      const response = await call('POST', route, { as, body: { messages: [sibling(before), bad, sibling(after)] } });

      expect(response.status, response.text).toBe(200);
      expect(response.body).toEqual({
        ok: true,
        queued: 2,
        rejected: [
          {
            index: 1,
            id: bad.id,
            reason: expect.stringContaining(testCase.reason),
            code: testCase.code ?? 'INVALID_MESSAGE',
          },
        ],
      });
      for (const tenant of testCase.absentIn ?? ['acme'])
        expect(await detailStatus(tenant, bad.id as string)).toBe(testCase.lookup ?? 404);
      expect(await detailStatus(siblingTenant, before)).toBe(200);
      expect(await detailStatus(siblingTenant, after)).toBe(200);
    },
  );

  it('items that are not objects are rejected without an id, their siblings queued', async () => {
    const response = await call('POST', route, {
      as: 'acme',
      body: { messages: [message(`${tag}-obj-a`), 'text', null, 42, [], message(`${tag}-obj-b`)] },
    });
    expect(response.status, response.text).toBe(200);
    expect(response.body.queued).toBe(2);
    expect(response.body.rejected).toEqual(
      ['string', 'null', 'number', 'array'].map((type, position) => ({
        index: position + 1,
        id: null,
        reason: expect.stringContaining(`expected object, received ${type}`),
        code: 'INVALID_MESSAGE',
      })),
    );
    expect(await detailStatus('acme', `${tag}-obj-a`)).toBe(200);
    expect(await detailStatus('acme', `${tag}-obj-b`)).toBe(200);
  });

  it('the same id twice in one request: the first is stored, the second rejected', async () => {
    const id = `${tag}-dup`;
    const response = await call('POST', route, {
      as: 'acme',
      body: { messages: [message(id, { subject: 'first' }), message(id, { subject: 'second' })] },
    });
    expect(response.body).toEqual({
      ok: true,
      queued: 1,
      rejected: [{ index: 1, id, reason: 'duplicate id in this request', code: 'DUPLICATE_ID' }],
    });
    const { message: stored, events } = await fx.detail('acme', id);
    expect(stored.subject).toBe('first');
    expect(events.map((event) => event.event_type)).not.toContain('updated');
  });
});

describe('POST /add-messages: requests rejected as a whole', () => {
  const tooMany = Array.from({ length: 1001 }, (_, index) => message(`many-${index}`));
  const cases: Array<{
    name: string;
    body: unknown;
    contentType?: string;
    status: number;
    code: string;
    ids: string[];
  }> = [
    {
      name: 'malformed JSON',
      body: '{"messages": [{"id": "json-1", "from": "a@example.com", "to": "b@example.net"}',
      status: 400,
      code: 'INVALID_JSON',
      ids: ['json-1'],
    },
    {
      name: 'messages is an object',
      body: { messages: message('obj-1') },
      status: 400,
      code: 'VALIDATION_FAILED',
      ids: ['obj-1'],
    },
    {
      name: 'messages is a string',
      body: { messages: 'obj-2' },
      status: 400,
      code: 'VALIDATION_FAILED',
      ids: ['obj-2'],
    },
    {
      name: 'messages missing',
      body: { message: [message('obj-3')] },
      status: 400,
      code: 'VALIDATION_FAILED',
      ids: ['obj-3'],
    },
    { name: 'body is an array', body: [message('arr-1')], status: 400, code: 'VALIDATION_FAILED', ids: ['arr-1'] },
    {
      name: 'unknown top-level field',
      body: { messages: [message('top-1')], surprise: 1 },
      status: 400,
      code: 'VALIDATION_FAILED',
      ids: ['top-1'],
    },
    {
      name: 'default_priority 9',
      body: { messages: [message('prio-1')], default_priority: 9 },
      status: 400,
      code: 'VALIDATION_FAILED',
      ids: ['prio-1'],
    },
    {
      name: 'form encoded body',
      body: 'messages=x',
      contentType: 'application/x-www-form-urlencoded',
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
      ids: [],
    },
    {
      name: '1001 messages (cap 1000)',
      body: { messages: tooMany },
      status: 400,
      code: 'VALIDATION_FAILED',
      ids: ['many-0', 'many-999', 'many-1000'],
    },
  ];

  it.each(cases)('$name → $status $code, nothing stored', async (testCase) => {
    for (const route of ROUTES) {
      const response = await call('POST', route, {
        as: 'acme',
        body: testCase.body,
        headers: testCase.contentType === undefined ? {} : { 'content-type': testCase.contentType },
      });
      expectErrorEnvelope(response, testCase.status, testCase.code);
      for (const id of testCase.ids) expect(await detailStatus('acme', id)).toBe(404);
    }
  });

  it('1000 messages (the cap) are accepted', async () => {
    const response = await call('POST', '/add-messages', { as: 'acme', body: { messages: tooMany.slice(0, 1000) } });
    expect(response.body).toEqual({ ok: true, queued: 1000, rejected: [] });
    expect(await detailStatus('acme', 'many-999')).toBe(200);
  });
});

describe('POST /add-messages: resubmitting an id', () => {
  it('an id that was already sent is rejected "already sent" and left as it was', async () => {
    const first = await fx.post(keyOf('acme'), [message('sent-1', { subject: 'original' })]);
    expect(first.body).toEqual({ ok: true, queued: 1, rejected: [] });
    await fx.settle();
    await sink.waitForMessages(1);
    expect(
      sink.messages.some((received) => received.raw.toString('utf8').includes('X-Genro-Mail-ID: sent-1\r\n')),
    ).toBe(true);
    expect((await fx.detail('acme', 'sent-1')).message.state).toBe('sent');

    const again = await fx.post(keyOf('acme'), [
      message('sent-1', { subject: 'replacement' }),
      message('sent-1-sibling'),
    ]);
    expect(again.body).toEqual({
      ok: true,
      queued: 1,
      rejected: [{ index: 0, id: 'sent-1', reason: 'already sent', code: 'ALREADY_SENT' }],
    });
    // The fields genro clients read keep their place on the wire; the code comes after them.
    expect(again.text).toContain(
      '"rejected":[{"index":0,"id":"sent-1","reason":"already sent","code":"ALREADY_SENT"}]',
    );
    const { message: stored, events } = await fx.detail('acme', 'sent-1');
    expect(stored).toMatchObject({ subject: 'original', state: 'sent' });
    expect(events.map((event) => event.event_type)).not.toContain('updated');
    expect(await detailStatus('acme', 'sent-1-sibling')).toBe(200);
  });

  it("a tenant key resubmitting another tenant's id under its tenant_id is rejected and changes nothing", async () => {
    const response = await fx.post(keyOf('acme'), [message('other-1', { tenant_id: 'other', subject: 'hijacked' })]);
    expect(response.body).toEqual({
      ok: true,
      queued: 0,
      rejected: [{ index: 0, id: 'other-1', reason: 'unknown tenant', code: 'UNKNOWN_TENANT' }],
    });
    expect(await detailStatus('acme', 'other-1')).toBe(404);
    await expectOtherUntouched();
  });

  it('an id still waiting in a suspended batch is updated in place', async () => {
    const suspended = await call('POST', '/commands/suspend', {
      as: 'acme',
      body: { tenant_id: 'acme', batch_code: 'B' },
    });
    expect(suspended.body).toMatchObject({ ok: true, batch_code: 'B', suspensions: ['B'] });

    const first = await fx.post(keyOf('acme'), [message('wait-1', { batch_code: 'B', subject: 'first version' })]);
    expect(first.body).toEqual({ ok: true, queued: 1, rejected: [] });
    expect((await fx.detail('acme', 'wait-1')).message).toMatchObject({
      status: 'suspended',
      subject: 'first version',
    });

    const second = await fx.post(keyOf('acme'), [message('wait-1', { batch_code: 'B', subject: 'second version' })]);
    expect(second.body).toEqual({ ok: true, queued: 1, rejected: [] });
    const { message: stored, events } = await fx.detail('acme', 'wait-1');
    expect(stored).toMatchObject({ status: 'suspended', subject: 'second version', state: 'queued' });
    expect(events.map((event) => event.event_type)).toEqual(['queued', 'updated']);
  });
});

describe('/commands/*', () => {
  it('suspend takes batch_code from the query string or from the JSON body', async () => {
    await fx.post(keyOf('acme'), [later('q-1', { batch_code: 'Q1' }), later('q-2', { batch_code: 'Q2' })]);

    const byQuery = await call('POST', '/commands/suspend?batch_code=Q1', { as: 'acme' });
    expect(byQuery.status, byQuery.text).toBe(200);
    expect(byQuery.body).toMatchObject({ ok: true, batch_code: 'Q1', suspended_messages: 1 });
    expect(byQuery.body.suspensions).toContain('Q1');
    expect((await fx.detail('acme', 'q-1')).message.status).toBe('suspended');
    expect((await fx.detail('acme', 'q-2')).message.status).toBe('deferred');

    const byBody = await call('POST', '/commands/suspend', { as: 'acme', body: { batch_code: 'Q2' } });
    expect(byBody.body).toMatchObject({ ok: true, batch_code: 'Q2', suspended_messages: 1 });
    expect((await fx.detail('acme', 'q-2')).message.status).toBe('suspended');

    const bodyWins = await call('POST', '/commands/activate?batch_code=Q1', { as: 'acme', body: { batch_code: 'Q2' } });
    expect(bodyWins.body).toMatchObject({ ok: true, batch_code: 'Q2', activated_messages: 1 });
    expect((await fx.detail('acme', 'q-1')).message.status).toBe('suspended');
    expect((await fx.detail('acme', 'q-2')).message.status).toBe('deferred');
  });

  it('delete-messages takes ids as a comma string in the query or as a JSON array', async () => {
    await fx.post(
      keyOf('acme'),
      ['d-1', 'd-2', 'd-3', 'd-4'].map((id) => later(id)),
    );

    const byQuery = await call('POST', '/commands/delete-messages?ids=d-1,%20d-2', { as: 'acme' });
    expect(byQuery.body).toEqual({ ok: true, deleted: ['d-1', 'd-2'], not_found: [], in_flight: [] });
    const byBody = await call('POST', '/commands/delete-messages', { as: 'acme', body: { ids: ['d-3', 'd-404'] } });
    expect(byBody.body).toEqual({ ok: true, deleted: ['d-3'], not_found: ['d-404'], in_flight: [] });

    for (const id of ['d-1', 'd-2', 'd-3']) expect(await detailStatus('acme', id)).toBe(404);
    expect(await detailStatus('acme', 'd-4')).toBe(200);
  });

  it('resend of unknown ids answers 200 with them in not_found', async () => {
    const response = await call('POST', '/commands/resend', { as: 'acme', body: { ids: ['nobody-1', 'nobody-2'] } });
    expect(response.body).toEqual({
      ok: true,
      resent: [],
      not_found: ['nobody-1', 'nobody-2'],
      not_final: [],
      body_erased: [],
    });
    expect(await detailStatus('acme', 'nobody-1')).toBe(404);
  });

  const badParams: Array<{ name: string; path: string; body?: unknown; as?: string; status: number; code: string }> = [
    {
      name: 'cleanup older_than_seconds=abc in the query',
      path: '/commands/cleanup-messages?older_than_seconds=abc',
      status: 400,
      code: 'VALIDATION_FAILED',
    },
    {
      name: 'cleanup older_than_seconds "abc" in the body',
      path: '/commands/cleanup-messages',
      body: { older_than_seconds: 'abc' },
      status: 400,
      code: 'VALIDATION_FAILED',
    },
    {
      name: 'cleanup without older_than_seconds',
      path: '/commands/cleanup-messages',
      body: {},
      status: 400,
      code: 'VALIDATION_FAILED',
    },
    {
      name: 'cleanup with a negative age',
      path: '/commands/cleanup-messages',
      body: { older_than_seconds: -1 },
      status: 400,
      code: 'VALIDATION_FAILED',
    },
    { name: 'delete without ids', path: '/commands/delete-messages', body: {}, status: 400, code: 'VALIDATION_FAILED' },
    {
      name: 'delete with an empty id list',
      path: '/commands/delete-messages?ids=,,',
      status: 400,
      code: 'VALIDATION_FAILED',
    },
    {
      name: 'resend with ids as a number',
      path: '/commands/resend',
      body: { ids: 5 },
      status: 400,
      code: 'VALIDATION_FAILED',
    },
    {
      name: 'suspend with an unknown parameter',
      path: '/commands/suspend',
      body: { batch: 'x' },
      status: 400,
      code: 'VALIDATION_FAILED',
    },
    {
      name: 'suspend with CR/LF in batch_code',
      path: '/commands/suspend',
      body: { batch_code: 'a\r\nb' },
      status: 400,
      code: 'VALIDATION_FAILED',
    },
    {
      name: 'suspend with malformed JSON',
      path: '/commands/suspend',
      body: '{"batch_code":',
      status: 400,
      code: 'INVALID_JSON',
    },
    {
      name: 'suspend with a JSON array',
      path: '/commands/suspend',
      body: '["B"]',
      status: 400,
      code: 'VALIDATION_FAILED',
    },
    {
      name: 'admin token without tenant_id',
      path: '/commands/run-now',
      as: 'admin',
      body: {},
      status: 400,
      code: 'VALIDATION_FAILED',
    },
    {
      name: 'admin token naming an unknown tenant',
      path: '/commands/suspend',
      as: 'admin',
      body: { tenant_id: 'nobody' },
      status: 404,
      code: 'NOT_FOUND',
    },
    {
      name: 'admin reading a message of an unknown tenant',
      path: '/messages/x?tenant_id=nobody',
      as: 'admin',
      status: 404,
      code: 'NOT_FOUND',
    },
  ];

  it.each(badParams)('$name → $status $code', async (testCase) => {
    const method = testCase.path.startsWith('/messages/') ? 'GET' : 'POST';
    const response = await call(method, testCase.path, { as: testCase.as ?? 'acme', body: testCase.body });
    expectErrorEnvelope(response, testCase.status, testCase.code);
  });

  const crossTenant: Array<{ path: string; body: Record<string, unknown> }> = [
    { path: '/commands/run-now', body: { tenant_id: 'other' } },
    { path: '/commands/suspend', body: { tenant_id: 'other' } },
    { path: '/commands/suspend', body: { tenant_id: 'other', batch_code: 'B' } },
    { path: '/commands/activate', body: { tenant_id: 'other' } },
    { path: '/commands/delete-messages', body: { tenant_id: 'other', ids: ['other-1'] } },
    { path: '/commands/resend', body: { tenant_id: 'other', ids: ['other-1'] } },
    { path: '/commands/cleanup-messages', body: { tenant_id: 'other', older_than_seconds: 0 } },
  ];

  it.each(crossTenant)(
    "$path with a tenant key naming another tenant → 404, the other tenant's data unchanged",
    async (testCase) => {
      const inBody = await call('POST', testCase.path, { as: 'acme', body: testCase.body });
      expectErrorEnvelope(inBody, 404, 'NOT_FOUND');
      const query = new URLSearchParams(
        Object.entries(testCase.body).map(([key, value]): [string, string] => [
          key,
          Array.isArray(value) ? value.join(',') : String(value),
        ]),
      );
      const inQuery = await call('POST', `${testCase.path}?${query.toString()}`, { as: 'acme' });
      expectErrorEnvelope(inQuery, 404, 'NOT_FOUND');
      await expectOtherUntouched();
    },
  );

  it("a tenant key cannot read or delete another tenant's message by id", async () => {
    expectErrorEnvelope(await call('GET', '/messages/other-1?tenant_id=other', { as: 'acme' }), 404, 'NOT_FOUND');
    expectErrorEnvelope(await call('GET', '/messages/other-1', { as: 'acme' }), 404, 'NOT_FOUND');
    const deleted = await call('POST', '/commands/delete-messages', { as: 'acme', body: { ids: ['other-1'] } });
    expect(deleted.body).toEqual({ ok: true, deleted: [], not_found: ['other-1'], in_flight: [] });
    await expectOtherUntouched();
  });
});
