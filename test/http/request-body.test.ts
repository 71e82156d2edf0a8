// Bodies sent without a Content-Length (chunked) are held to http.max_body_bytes as they arrive,
// and a refused one leaves its keep-alive connection usable.
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestDaemon, type TestDaemon } from '../helpers/test-daemon.js';

const MAX_BODY = 8192;

interface Answer {
  status: number;
  body: { error?: { code: string }; queued?: number };
  socket: unknown;
}

/** POSTs `chunks` one write each (Transfer-Encoding: chunked, no Content-Length). */
function postChunked(url: string, path: string, token: string, chunks: string[], agent: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      new URL(path, url),
      { method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } },
      (incoming) => {
        const parts: Buffer[] = [];
        incoming.on('data', (part: Buffer) => parts.push(part));
        incoming.on('end', () =>
          resolve({
            status: incoming.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(parts).toString('utf8')),
            socket: incoming.socket,
          }),
        );
      },
    );
    outgoing.on('error', reject);
    for (const chunk of chunks) outgoing.write(chunk);
    outgoing.end();
  });
}

const message = (id: string, body: string) => ({
  id,
  from: 'app@example.com',
  to: 'user@example.net',
  subject: 's',
  body,
});

describe('chunked request bodies', () => {
  let t: TestDaemon;
  let key: string;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });

  beforeAll(async () => {
    t = await startTestDaemon(`[http]\nmax_body_bytes = ${MAX_BODY}\n`);
    key = (await api(t.url, 'POST', '/tenant', { token: t.adminToken, body: { id: 'acme' } })).body.api_key;
    expect(
      (
        await api(t.url, 'POST', '/account', {
          token: t.adminToken,
          body: { id: 'main', tenant_id: 'acme', host: 'smtp.example.com' },
        })
      ).status,
    ).toBe(201);
  });
  afterAll(async () => {
    agent.destroy();
    await t.stop();
    t.cleanup();
  });

  it('accepts a body under the limit in several chunks', async () => {
    const text = JSON.stringify({ messages: [message('small', 'hello')] });
    const answer = await postChunked(t.url, '/add-messages', key, [text.slice(0, 10), text.slice(10)], agent);
    expect(answer).toMatchObject({ status: 200, body: { queued: 1 } });
  });

  it('refuses one that grows past the limit with 413, stores nothing, and answers the next request on the same connection', async () => {
    const text = JSON.stringify({ messages: [message('big', 'x'.repeat(MAX_BODY))] });
    const chunks = Array.from({ length: Math.ceil(text.length / 1000) }, (_, index) =>
      text.slice(index * 1000, (index + 1) * 1000),
    );
    const refused = await postChunked(t.url, '/add-messages', key, chunks, agent);
    expect(refused).toMatchObject({ status: 413, body: { error: { code: 'PAYLOAD_TOO_LARGE' } } });

    const tenantRefused = await postChunked(
      t.url,
      '/tenant',
      t.adminToken,
      [JSON.stringify({ id: 'newco', name: 'n'.repeat(MAX_BODY) })],
      agent,
    );
    expect(tenantRefused).toMatchObject({ status: 413, body: { error: { code: 'PAYLOAD_TOO_LARGE' } } });

    const next = await postChunked(
      t.url,
      '/add-messages',
      key,
      [JSON.stringify({ messages: [message('after', 'hi')] })],
      agent,
    );
    expect(next).toMatchObject({ status: 200, body: { queued: 1 } });
    expect(next.socket).toBe(refused.socket);

    const found = await api(t.url, 'GET', '/messages', { token: key });
    expect(found.body.messages.map((m: { id: string }) => m.id).sort()).toEqual(['after', 'small']);
    expect(
      (await api(t.url, 'GET', '/tenants', { token: t.adminToken })).body.tenants.map((x: { id: string }) => x.id),
    ).toEqual(['acme']);
  });

  it('forgets a body whose client goes away halfway, and goes on serving', async () => {
    const { port } = new URL(t.url);
    const text = JSON.stringify({ messages: [message('halfway', 'hello')] });
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /add-messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${text.length}\r\n\r\n${text.slice(0, 20)}`,
        );
        // Closed once the daemon has the headers and the first bytes: a request it has begun to read.
        setImmediate(() => socket.destroy());
      });
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    const next = await postChunked(
      t.url,
      '/add-messages',
      key,
      [JSON.stringify({ messages: [message('later', 'hi')] })],
      agent,
    );
    expect(next).toMatchObject({ status: 200, body: { queued: 1 } });
    const found = await api(t.url, 'GET', '/messages', { token: key });
    expect(found.body.messages.map((m: { id: string }) => m.id)).not.toContain('halfway');
    expect((await api(t.url, 'GET', '/health')).status).toBe(200);
  });
});
