import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../core/app-error.js';
import type { AttachmentSpec, MessagePayload } from '../core/message/message.js';
import type { BuildRequest } from '../core/delivery/relay.js';
import { createAttachmentFetcher } from './attachment-fetcher.js';
import { createMailComposerBuilder } from './message-builder.js';

/** A MIME entity as read back from the built bytes: unfolded headers, raw body, child parts. */
interface Entity {
  headers: Array<[string, string]>;
  body: string;
  parts: Entity[];
}

function parseEntity(text: string): Entity {
  const split = text.indexOf('\r\n\r\n');
  const head = split === -1 ? text : text.slice(0, split);
  const body = split === -1 ? '' : text.slice(split + 4);
  const headers = head
    .replace(/\r\n[ \t]+/g, ' ')
    .split('\r\n')
    .map((line): [string, string] => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]);
  const boundary = /boundary="?([^";]+)"?/i.exec(headers.find(([name]) => name === 'content-type')?.[1] ?? '')?.[1];
  if (boundary === undefined) return { headers, body, parts: [] };
  const chunks = body.split(`--${boundary}`).slice(1, -1);
  return { headers, body, parts: chunks.map((chunk) => parseEntity(chunk.replace(/^\r\n/, '').replace(/\r\n$/, ''))) };
}

const header = (entity: Entity, name: string): string | undefined => entity.headers.find(([key]) => key === name)?.[1];
const headersNamed = (entity: Entity, name: string): string[] =>
  entity.headers.filter(([key]) => key === name).map(([, value]) => value);

/** Decodes RFC 2047 encoded words (B and Q) of a UTF-8 header value. */
function decodeWords(value: string): string {
  const bytes = [...value.matchAll(/=\?utf-8\?([bq])\?([^?]*)\?=/gi)].map(([, encoding, text = '']) =>
    encoding?.toLowerCase() === 'b'
      ? Buffer.from(text, 'base64')
      : Buffer.from(
          text
            .replace(/_/g, ' ')
            .replace(/=([0-9a-f]{2})/gi, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16))),
          'latin1',
        ),
  );
  return Buffer.concat(bytes).toString('utf8');
}

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

async function startPeer(answer: (url: string, response: ServerResponse) => void): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => answer(request.url ?? '', response));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  stops.push(async () => {
    server.close();
    await once(server, 'close');
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function payload(overrides: Partial<MessagePayload> = {}): MessagePayload {
  return {
    from: 'sender@example.com',
    to: ['rcpt@example.org'],
    cc: [],
    bcc: [],
    replyTo: null,
    returnPath: null,
    subject: 'Hello',
    body: 'Plain body',
    html: null,
    contentType: 'plain',
    headers: {},
    attachments: [],
    messageId: null,
    ...overrides,
  };
}

const TENANT: BuildRequest['tenant'] = {
  id: 't',
  clientBaseUrl: null,
  clientAttachmentPath: null,
  clientAuth: null,
  attachmentOffload: null,
};
const fetcher = createAttachmentFetcher({ timeoutMs: 5_000, maxBytes: 1 << 20, allowPrivateAddresses: true });
const builder = createMailComposerBuilder({
  fetchAttachment: fetcher.fetch,
  hostname: 'mx.mailproxy.test',
  files: null,
  now: Date.now,
});

async function build(overrides: Partial<MessagePayload> = {}, tenant = TENANT) {
  const built = await builder.build({ clientId: 'client-1', payload: payload(overrides), tenant });
  return { ...built, entity: parseEntity(built.raw.toString('latin1')) };
}

describe('the MailComposer message builder', () => {
  it('builds a text-only message', async () => {
    const { entity } = await build();
    expect(header(entity, 'content-type')).toMatch(/^text\/plain/);
    expect(entity.body).toContain('Plain body');
    expect(header(entity, 'from')).toBe('sender@example.com');
    expect(header(entity, 'to')).toBe('rcpt@example.org');
    expect(header(entity, 'subject')).toBe('Hello');
  });

  it('builds an html-only message, from html or from an html body', async () => {
    for (const overrides of [
      { body: null, html: '<p>Hi</p>' },
      { body: '<p>Hi</p>', contentType: 'html' as const },
    ]) {
      const { entity } = await build(overrides);
      expect(header(entity, 'content-type')).toMatch(/^text\/html/);
      expect(entity.body).toContain('<p>Hi</p>');
    }
  });

  it('puts text and html in a multipart/alternative', async () => {
    const { entity } = await build({ body: 'Plain body', html: '<p>Rich body</p>' });
    expect(header(entity, 'content-type')).toMatch(/^multipart\/alternative/);
    expect(entity.parts.map((part) => header(part, 'content-type')?.split(';')[0])).toEqual([
      'text/plain',
      'text/html',
    ]);
    expect(entity.parts[1]?.body).toContain('<p>Rich body</p>');
  });

  it('writes X-Genro-Mail-ID exactly as the client id, quotes, colons and semicolons included', async () => {
    const clientId = `inv-"1";x:y'--${'z'.repeat(200)}`;
    const built = await builder.build({ clientId, payload: payload(), tenant: TENANT });
    expect(header(parseEntity(built.raw.toString('latin1')), 'x-genro-mail-id')).toBe(clientId);
  });

  it('writes a display name holding an address, a comma or a quote as that name, never as another address', async () => {
    const { entity, envelope } = await build({
      from: 'ceo@bank.example, Me <me@tenant.example>',
      to: ['victim@evil.example, Evil <rcpt@example.org>', 'a"b <two@example.org>'],
      replyTo: 'x@y.example; Z <reply@example.org>',
    });
    expect(header(entity, 'from')).toBe('"ceo@bank.example, Me" <me@tenant.example>');
    expect(header(entity, 'to')).toBe('"victim@evil.example, Evil" <rcpt@example.org>, "a\\"b" <two@example.org>');
    expect(header(entity, 'reply-to')).toBe('"x@y.example; Z" <reply@example.org>');
    expect(envelope).toEqual({ mailFrom: 'me@tenant.example', rcptTo: ['rcpt@example.org', 'two@example.org'] });
  });

  it('writes Cc, leaves Bcc out of the bytes, and puts every recipient in the envelope once', async () => {
    const { entity, envelope, raw } = await build({
      to: ['Ann <ann@example.org>'],
      cc: ['cc@example.org', 'ANN@example.org'],
      bcc: ['Hidden <hidden@example.net>'],
    });
    expect(header(entity, 'cc')).toBe('cc@example.org, ANN@example.org');
    expect(header(entity, 'bcc')).toBeUndefined();
    expect(raw.toString('latin1')).not.toContain('hidden@example.net');
    expect(envelope.rcptTo).toEqual(['ann@example.org', 'cc@example.org', 'hidden@example.net']);
  });

  it('keeps custom headers and always writes our X-Genro-Mail-ID', async () => {
    const { entity } = await build({
      headers: { 'X-Campaign': 'spring', 'x-genro-mail-id': 'forged', 'Content-Type': 'text/evil' },
    });
    expect(header(entity, 'x-campaign')).toBe('spring');
    expect(headersNamed(entity, 'x-genro-mail-id')).toEqual(['client-1']);
    expect(header(entity, 'content-type')).toMatch(/^text\/plain/);
  });

  it('adds Date and a Message-ID on our host name, and returns it', async () => {
    const { entity, messageIdHeader } = await build();
    expect(Number.isNaN(Date.parse(header(entity, 'date') ?? ''))).toBe(false);
    expect(messageIdHeader).toMatch(/^<[^<>@]+@mx\.mailproxy\.test>$/);
    expect(headersNamed(entity, 'message-id')).toEqual([messageIdHeader]);
  });

  it("uses the client's Message-ID and Date when given", async () => {
    const { entity, messageIdHeader } = await build({
      messageId: 'abc@client.example',
      headers: { Date: 'Mon, 01 Jan 2024 10:00:00 +0000' },
    });
    expect(messageIdHeader).toBe('<abc@client.example>');
    expect(headersNamed(entity, 'message-id')).toEqual(['<abc@client.example>']);
    expect(headersNamed(entity, 'date')).toEqual(['Mon, 01 Jan 2024 10:00:00 +0000']);
  });

  it('takes MAIL FROM from the return path, else the bare From address', async () => {
    expect((await build({ from: 'ACME Billing <billing@acme.example>' })).envelope.mailFrom).toBe(
      'billing@acme.example',
    );
    expect((await build({ returnPath: 'Bounces <bounce@acme.example>' })).envelope.mailFrom).toBe(
      'bounce@acme.example',
    );
  });

  it('encodes a UTF-8 subject and display name as RFC 2047 words', async () => {
    const { entity, raw } = await build({ subject: 'Fattura n° 42 — café ✓', from: 'Zoë Ünal <zoe@example.com>' });
    const head = raw.subarray(0, raw.indexOf('\r\n\r\n'));
    expect([...head].every((byte) => byte < 128)).toBe(true);
    expect(decodeWords(header(entity, 'subject') ?? '')).toBe('Fattura n° 42 — café ✓');
    expect(decodeWords(header(entity, 'from') ?? '')).toBe('Zoë Ünal');
  });

  it('attaches base64, http_url and endpoint contents byte for byte', async () => {
    const files = {
      inline: Buffer.from('%PDF-1.4 inline \u0000\u00ff'),
      url: Buffer.from([0, 255, 13, 10, 46, 1]),
      endpoint: Buffer.from('endpoint bytes \r\n.\r\n'),
    };
    const base = await startPeer((url, response) =>
      response.writeHead(200).end(url === '/file' ? files.url : files.endpoint),
    );
    const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');
    const attachments: AttachmentSpec[] = [
      {
        filename: 'a.pdf',
        storagePath: files.inline.toString('base64'),
        fetchMode: 'base64',
        mimeType: null,
        contentMd5: md5(files.inline),
      },
      {
        filename: 'b.bin',
        storagePath: `${base}/file`,
        fetchMode: 'http_url',
        mimeType: 'application/x-test',
        contentMd5: null,
      },
      {
        filename: 'résumé.txt',
        storagePath: 'docs/1',
        fetchMode: 'endpoint',
        mimeType: null,
        contentMd5: md5(files.endpoint).toUpperCase(),
      },
    ];
    const tenant = { ...TENANT, clientBaseUrl: base, clientAttachmentPath: '/attachments' };
    const { entity } = await build({ body: 'see attached', html: '<p>see attached</p>', attachments }, tenant);
    expect(header(entity, 'content-type')).toMatch(/^multipart\/mixed/);
    const [alternative, ...parts] = entity.parts;
    expect(header(alternative as Entity, 'content-type')).toMatch(/^multipart\/alternative/);
    expect(parts.map((part) => header(part, 'content-type')?.split(';')[0])).toEqual([
      'application/pdf',
      'application/x-test',
      'text/plain',
    ]);
    expect(parts.map((part) => header(part, 'content-transfer-encoding'))).toEqual(['base64', 'base64', 'base64']);
    expect(parts.map((part) => Buffer.from(part.body, 'base64'))).toEqual([files.inline, files.url, files.endpoint]);
    expect(header(parts[2] as Entity, 'content-disposition')).toBe(
      "attachment; filename*0*=utf-8''r%C3%A9sum%C3%A9.txt",
    );
  });

  it('refuses an attachment whose bytes do not match content_md5, as a transient failure', async () => {
    const spec: AttachmentSpec = {
      filename: 'x.txt',
      storagePath: Buffer.from('abc').toString('base64'),
      fetchMode: 'base64',
      mimeType: null,
      contentMd5: '0'.repeat(32),
    };
    const error = await build({ attachments: [spec] }).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'ATTACHMENT_UNAVAILABLE', transient: true, details: { filename: 'x.txt' } });
  });
});
