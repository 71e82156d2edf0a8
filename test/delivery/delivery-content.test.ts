import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

/** Splits a raw message into its MIME parts' headers and decoded bodies (enough for our own output). */
function mimeParts(raw: string): Array<{ headers: string; body: Buffer }> {
  const boundaries = [...raw.matchAll(/boundary="?([^";\r\n]+)"?/g)].map((match) => match[1] ?? '');
  const parts: Array<{ headers: string; body: Buffer }> = [];
  for (const boundary of boundaries) {
    for (const chunk of raw.split(`--${boundary}`).slice(1, -1)) {
      const split = chunk.indexOf('\r\n\r\n');
      const headers = chunk.slice(0, split);
      const text = chunk.slice(split + 4).replace(/\r\n$/, '');
      const body = /content-transfer-encoding:\s*base64/i.test(headers)
        ? Buffer.from(text.replace(/\s+/g, ''), 'base64')
        : Buffer.from(text);
      parts.push({ headers, body });
    }
  }
  return parts;
}

// The same bytes whether parsing, composing and relaying run in worker threads (the default) or on the main thread.
const THREADINGS = [
  { threads: 'in worker threads', fixture: {} },
  { threads: 'composed in the relay thread', fixture: { dispatch: { compose_threads: '0', relay_threads: '1' } } },
  {
    threads: 'all on the main thread',
    fixture: { dispatch: { compose_threads: '0', relay_threads: '0' }, extraToml: '[http]\nparse_threads = 0\n' },
  },
];

describe.each(THREADINGS)('what a posted message looks like at the relay, $threads', ({ fixture }) => {
  let fx: QueueFixture;
  let sink: SmtpSink;
  let other: SmtpSink;
  let files: Server;
  let filesUrl: string;
  const endpointCalls: Array<{ body: string; authorization: string | undefined }> = [];
  const pdf = Buffer.from(Array.from({ length: 5000 }, (_, index) => (index * 7) % 256));
  const png = Buffer.from(Array.from({ length: 3000 }, (_, index) => (index * 13) % 256));
  const csv = Buffer.from('a,b\n1,2\n', 'utf8');
  let key: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    other = await startSmtpSink();
    files = createServer((request: IncomingMessage, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        if (request.url === '/files/report.png') return response.end(png);
        if (request.url === '/attachments') {
          endpointCalls.push({ body, authorization: request.headers.authorization });
          return response.end(csv);
        }
        response.statusCode = 404;
        response.end();
      });
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    fx = await startQueueFixture(fixture);
    key = await fx.createTenant('acme', {
      client_base_url: filesUrl,
      client_attachment_path: '/attachments',
      client_auth: { method: 'bearer', token: 'attachment-token-1234' },
    });
    await fx.createAccount('acme', 'main', sink, { is_default: true });
    await fx.createAccount('acme', 'second', other);
  });
  afterAll(async () => {
    await fx.stop();
    fx.t.cleanup();
    await sink.stop();
    await other.stop();
    files.close();
  });

  it('arrives at the right account with our headers and the right envelope', async () => {
    const posted = await fx.post(key, [
      message('m-1', {
        from: 'ACME <noreply@acme.example>',
        return_path: 'bounces@acme.example',
        to: ['a@example.net', 'B <b@example.net>'],
        cc: 'c@example.net',
        bcc: ['hidden@example.net'],
        headers: { 'X-Campaign': 'autumn' },
      }),
      message('m-2', { account_id: 'second' }),
    ]);
    expect(posted.body).toEqual({ ok: true, queued: 2, rejected: [] });
    await sink.waitForMessages(1);
    await other.waitForMessages(1);
    await fx.settle();

    const received = sink.messages[0];
    expect(received?.mailFrom).toBe('bounces@acme.example');
    expect(received?.rcptTo).toEqual(['a@example.net', 'b@example.net', 'c@example.net', 'hidden@example.net']);
    const raw = received?.raw.toString('utf8') ?? '';
    expect(raw).toMatch(/^X-Genro-Mail-ID: m-1\r$/m);
    expect(raw).toMatch(/^Date: .+\r$/m);
    expect(raw).toMatch(/^Message-ID: <[^>]+@[^>]+>\r$/m);
    expect(raw).toMatch(/^From: ACME <noreply@acme\.example>\r$/m);
    expect(raw).toMatch(/^Cc: c@example\.net\r$/m);
    expect(raw).toMatch(/^X-Campaign: autumn\r$/m);
    expect(raw).not.toMatch(/hidden@example\.net/);
    expect(other.messages[0]?.raw.toString()).toMatch(/^X-Genro-Mail-ID: m-2\r$/m);

    const { message: stored, events } = await fx.detail('acme', 'm-1');
    expect(stored).toMatchObject({
      status: 'sent',
      state: 'sent',
      attempts: 1,
      last_reply_code: 250,
      account_id: 'main',
    });
    expect(stored.sent_ts).toEqual(expect.any(Number));
    expect(events.map((event) => event.event_type)).toEqual(['queued', 'sending', 'sent']);
  });

  it('sends text and html as multipart/alternative', async () => {
    await fx.post(key, [message('alt-1', { body: 'plain words', html: '<p>html words</p>' })]);
    await sink.waitForMessages(2);
    const raw = sink.messages[1]?.raw.toString('utf8') ?? '';
    expect(raw).toMatch(/Content-Type: multipart\/alternative/);
    const parts = mimeParts(raw);
    expect(parts.find((part) => /text\/plain/.test(part.headers))?.body.toString()).toContain('plain words');
    expect(parts.find((part) => /text\/html/.test(part.headers))?.body.toString()).toContain('<p>html words</p>');
  });

  it('delivers attachments of all three fetch modes byte for byte', async () => {
    const md5 = (bytes: Buffer): string => createHash('md5').update(bytes).digest('hex');
    await fx.post(key, [
      message('att-1', {
        attachments: [
          {
            filename: 'invoice.pdf',
            storage_path: pdf.toString('base64'),
            fetch_mode: 'base64',
            mime_type: 'application/pdf',
            content_md5: md5(pdf),
          },
          {
            filename: 'report.png',
            storage_path: `${filesUrl}/files/report.png`,
            fetch_mode: 'http_url',
            mime_type: 'image/png',
          },
          { filename: 'data.csv', storage_path: 'tenant/42/data.csv', fetch_mode: 'endpoint', mime_type: 'text/csv' },
        ],
      }),
    ]);
    await sink.waitForMessages(3);
    const parts = mimeParts(sink.messages[2]?.raw.toString('utf8') ?? '');
    const byName = (name: string) => parts.find((part) => part.headers.includes(name))?.body;
    expect(byName('invoice.pdf')?.equals(pdf)).toBe(true);
    expect(byName('report.png')?.equals(png)).toBe(true);
    expect(byName('data.csv')?.equals(csv)).toBe(true);
    expect(endpointCalls).toEqual([
      { body: JSON.stringify({ storage_path: 'tenant/42/data.csv' }), authorization: 'Bearer attachment-token-1234' },
    ]);
  });

  it('retries an attachment that cannot be fetched yet instead of failing the message', async () => {
    await fx.post(key, [
      message('att-missing', {
        attachments: [{ filename: 'late.pdf', storage_path: `${filesUrl}/files/late.pdf`, fetch_mode: 'http_url' }],
      }),
    ]);
    await fx.settle();
    const { message: stored } = await fx.detail('acme', 'att-missing');
    expect(stored).toMatchObject({ state: 'deferred', status: 'deferred' });
    expect(stored.deferred_reason).toMatch(/late\.pdf/);
  });
});
