import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../core/app-error.js';
import type { AttachmentSpec } from '../core/message/message.js';
import type { BuildRequest } from '../core/delivery/relay.js';
import { createAttachmentFetcher, type AttachmentFetcherOptions } from './attachment-fetcher.js';

interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

type Handler = (request: Recorded, response: ServerResponse) => void;

/** A real HTTP peer on port 0 that records each request and answers as scripted. */
async function startPeer(handler: Handler): Promise<{ base: string; port: number; requests: Recorded[] }> {
  const requests: Recorded[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const recorded = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(recorded);
      handler(recorded, response);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  stops.push(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, port, requests };
}

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

const NO_TENANT: BuildRequest['tenant'] = {
  id: 't',
  clientBaseUrl: null,
  clientAttachmentPath: null,
  clientAuth: null,
  attachmentOffload: null,
};
const CONTENT = Buffer.from([0, 1, 2, 250, 251, 252, 13, 10, 46, 13, 10]);
const OPTIONS: AttachmentFetcherOptions = { timeoutMs: 5_000, maxBytes: 1024, allowPrivateAddresses: true };

function spec(fetchMode: AttachmentSpec['fetchMode'], storagePath: string): AttachmentSpec {
  return { filename: 'report.bin', storagePath, fetchMode, mimeType: null, contentMd5: null };
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe('ATTACHMENT_UNAVAILABLE');
  expect((error as AppError).details).toMatchObject({ filename: 'report.bin' });
  return error as AppError;
}

const serve =
  (status: number, body: Buffer | string, headers: Record<string, string> = {}): Handler =>
  (_request, response) => {
    response.writeHead(status, headers).end(body);
  };

describe('base64 attachments', () => {
  const fetcher = createAttachmentFetcher(OPTIONS);

  it('decodes the content, with or without a data: prefix', async () => {
    expect(await fetcher.fetch(spec('base64', CONTENT.toString('base64')), NO_TENANT)).toEqual(CONTENT);
    expect(
      await fetcher.fetch(
        spec('base64', `data:application/octet-stream;base64,${CONTENT.toString('base64')}`),
        NO_TENANT,
      ),
    ).toEqual(CONTENT);
  });

  it('refuses content that is not base64, permanently', async () => {
    expect((await failure(fetcher.fetch(spec('base64', 'not base64!'), NO_TENANT))).transient).toBe(false);
  });
});

describe('http_url attachments', () => {
  it('fetches the bytes from a local server when private addresses are allowed', async () => {
    const peer = await startPeer(serve(200, CONTENT));
    const bytes = await createAttachmentFetcher(OPTIONS).fetch(spec('http_url', `${peer.base}/files/a.bin`), NO_TENANT);
    expect(bytes).toEqual(CONTENT);
    expect(peer.requests.map((request) => [request.method, request.url])).toEqual([['GET', '/files/a.bin']]);
  });

  it('refuses a loopback address, literal or resolved, without connecting', async () => {
    const peer = await startPeer(serve(200, CONTENT));
    const guarded = createAttachmentFetcher({ ...OPTIONS, allowPrivateAddresses: false });
    const literal = await failure(guarded.fetch(spec('http_url', `${peer.base}/a.bin`), NO_TENANT));
    const resolved = await failure(guarded.fetch(spec('http_url', `http://localhost:${peer.port}/a.bin`), NO_TENANT));
    expect(literal.message).toMatch(/not allowed/);
    expect(resolved.message).toMatch(/not allowed/);
    expect([literal.transient, resolved.transient]).toEqual([false, false]);
    expect(peer.requests).toHaveLength(0);
  });

  it('re-checks every redirect hop and refuses one to a loopback address', async () => {
    const peer = await startPeer(serve(302, '', { location: 'http://127.0.0.2/secret' }));
    // Only the first hop's address is trusted here, standing in for a public server.
    const guarded = createAttachmentFetcher({
      ...OPTIONS,
      allowPrivateAddresses: false,
      isForbiddenAddress: (address) => address !== '127.0.0.1',
    });
    const error = await failure(guarded.fetch(spec('http_url', `${peer.base}/start`), NO_TENANT));
    expect(error.message).toMatch(/127\.0\.0\.2 not allowed/);
    expect(peer.requests).toHaveLength(1);
  });

  it('follows up to three redirects and refuses a fourth', async () => {
    const peer = await startPeer((request, response) => {
      const hop = Number(request.url.slice(1));
      if (request.url === '/3') return void response.writeHead(200).end(CONTENT);
      response.writeHead(307, { location: `/${hop + 1}` }).end();
    });
    const fetcher = createAttachmentFetcher(OPTIONS);
    expect(await fetcher.fetch(spec('http_url', `${peer.base}/0`), NO_TENANT)).toEqual(CONTENT);
    expect((await failure(fetcher.fetch(spec('http_url', `${peer.base}/-1`), NO_TENANT))).message).toMatch(/redirects/);
  });

  it('refuses a redirect to another scheme', async () => {
    const peer = await startPeer(serve(301, '', { location: 'file:///etc/passwd' }));
    const error = await failure(createAttachmentFetcher(OPTIONS).fetch(spec('http_url', `${peer.base}/a`), NO_TENANT));
    expect(error.message).toMatch(/scheme file: not allowed/);
  });

  it('gives up after timeoutMs on a server that never answers, as a transient failure', async () => {
    const peer = await startPeer(() => undefined);
    const startedAt = Date.now();
    const error = await failure(
      createAttachmentFetcher({ ...OPTIONS, timeoutMs: 200 }).fetch(spec('http_url', `${peer.base}/hang`), NO_TENANT),
    );
    expect(error.transient).toBe(true);
    expect(error.message).toMatch(/timed out/);
    expect(Date.now() - startedAt).toBeLessThan(3_000);
  });

  it('refuses a body over maxBytes, declared or streamed, permanently', async () => {
    const big = Buffer.alloc(4096, 7);
    const peer = await startPeer((request, response) => {
      if (request.url === '/declared')
        return void response.writeHead(200, { 'content-length': String(big.length) }).end(big);
      response.writeHead(200);
      response.write(big.subarray(0, 1000));
      response.end(big.subarray(1000));
    });
    const fetcher = createAttachmentFetcher(OPTIONS);
    for (const path of ['/declared', '/streamed']) {
      const error = await failure(fetcher.fetch(spec('http_url', `${peer.base}${path}`), NO_TENANT));
      expect(error.transient).toBe(false);
      expect(error.message).toMatch(/larger than 1024 bytes/);
    }
  });

  it('reports a 500 as a transient failure with the status', async () => {
    const peer = await startPeer(serve(500, 'boom'));
    const error = await failure(createAttachmentFetcher(OPTIONS).fetch(spec('http_url', `${peer.base}/a`), NO_TENANT));
    expect(error.transient).toBe(true);
    expect(error.details).toEqual({ filename: 'report.bin', status: 500 });
  });

  it('reports a refused connection as a transient failure', async () => {
    const peer = await startPeer(serve(200, CONTENT));
    await Promise.all(stops.splice(0).map((stop) => stop()));
    const error = await failure(createAttachmentFetcher(OPTIONS).fetch(spec('http_url', `${peer.base}/a`), NO_TENANT));
    expect(error.transient).toBe(true);
  });
});

describe('endpoint attachments', () => {
  const fetcher = createAttachmentFetcher({ ...OPTIONS, allowPrivateAddresses: false });

  it('posts the storage path with a bearer token and returns the body bytes', async () => {
    const peer = await startPeer(serve(200, CONTENT, { 'content-type': 'application/octet-stream' }));
    const tenant = {
      id: 't',
      attachmentOffload: null,
      clientBaseUrl: `${peer.base}/app/`,
      clientAttachmentPath: '/mail-proxy/attachments',
      clientAuth: { method: 'bearer', token: 't0k' },
    } as const;
    expect(await fetcher.fetch(spec('endpoint', 'invoices/42.pdf'), tenant)).toEqual(CONTENT);
    const [request] = peer.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/app/mail-proxy/attachments');
    expect(request?.headers['authorization']).toBe('Bearer t0k');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request?.body.toString('utf8') ?? '')).toEqual({ storage_path: 'invoices/42.pdf' });
  });

  it('sends basic credentials and decodes a JSON {content} answer', async () => {
    const peer = await startPeer(
      serve(200, JSON.stringify({ content: CONTENT.toString('base64') }), {
        'content-type': 'application/json; charset=utf-8',
      }),
    );
    const tenant = {
      id: 't',
      attachmentOffload: null,
      clientBaseUrl: peer.base,
      clientAttachmentPath: 'att',
      clientAuth: { method: 'basic', user: 'ann', password: 'p:ss' },
    } as const;
    expect(await fetcher.fetch(spec('endpoint', 'x'), tenant)).toEqual(CONTENT);
    expect(peer.requests[0]?.headers['authorization']).toBe(`Basic ${Buffer.from('ann:p:ss').toString('base64')}`);
  });

  it('sends no Authorization header when the tenant has none', async () => {
    const peer = await startPeer(serve(200, CONTENT));
    await fetcher.fetch(spec('endpoint', 'x'), {
      id: 't',
      attachmentOffload: null,
      clientBaseUrl: peer.base,
      clientAttachmentPath: '/att',
      clientAuth: null,
    });
    expect(peer.requests[0]?.headers['authorization']).toBeUndefined();
  });

  it('refuses, permanently, when the tenant has no attachment endpoint', async () => {
    const error = await failure(fetcher.fetch(spec('endpoint', 'x'), NO_TENANT));
    expect(error.transient).toBe(false);
    expect(error.message).toMatch(/client_attachment_path/);
  });

  it('reports a non-2xx answer as a transient failure', async () => {
    const peer = await startPeer(serve(404, 'no'));
    const error = await failure(
      fetcher.fetch(spec('endpoint', 'x'), {
        id: 't',
        attachmentOffload: null,
        clientBaseUrl: peer.base,
        clientAttachmentPath: '/att',
        clientAuth: null,
      }),
    );
    expect(error.transient).toBe(true);
    expect(error.details).toMatchObject({ status: 404 });
  });
});
