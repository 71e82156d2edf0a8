/**
 * Fetches an attachment's bytes by its mode: inline base64, a public URL (behind
 * the SSRF guard, redirects followed by hand and re-checked), or the tenant's own
 * attachment endpoint. Every failure is AppError ATTACHMENT_UNAVAILABLE.
 */
import type { AttachmentSpec } from '../core/message/index.js';
import type { BuildRequest } from '../core/delivery/index.js';
import type { ClientAuth } from '../core/tenant/index.js';
import { attachmentUnavailable, exchangeHttp, type HttpAnswer } from './attachment-fetcher-http.js';
import { createGuardedLookup, isForbiddenAddress, refuseUrl, type AddressPolicy } from './url-guard.js';

export interface AttachmentFetcher {
  /** The attachment's bytes; rejects with AppError ATTACHMENT_UNAVAILABLE (transient unless retrying cannot help). */
  fetch(spec: AttachmentSpec, tenant: BuildRequest['tenant']): Promise<Buffer>;
}

export interface AttachmentFetcherOptions {
  /** Deadline of one fetch, redirects included. */
  timeoutMs: number;
  maxBytes: number;
  /** Lets `http_url` reach loopback and private networks (tests, trusted LANs). */
  allowPrivateAddresses: boolean;
  /** Which addresses the guard refuses; defaults to url-guard's block list. */
  isForbiddenAddress?: AddressPolicy;
}

const MAX_REDIRECTS = 3;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const DATA_URL_PREFIX = /^data:[^,]*;base64,/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict base64 (optionally behind a `data:...;base64,` prefix); null when it is not base64. */
export function decodeBase64(text: string): Buffer | null {
  const compact = text.replace(DATA_URL_PREFIX, '').replace(/\s+/g, '');
  if (!BASE64.test(compact) || compact.length % 4 === 1) return null;
  return Buffer.from(compact, 'base64');
}

function fromBase64(spec: AttachmentSpec): Buffer {
  const bytes = decodeBase64(spec.storagePath);
  if (bytes === null) throw attachmentUnavailable(spec.filename, 'content is not valid base64', false);
  return bytes;
}

function parseUrl(text: string, filename: string, base?: URL): URL {
  try {
    return new URL(text, base);
  } catch (error) {
    throw attachmentUnavailable(filename, 'invalid URL', false, {}, error);
  }
}

function expectSuccess(answer: HttpAnswer, filename: string): Buffer {
  if (answer.status >= 200 && answer.status < 300) return answer.body;
  throw attachmentUnavailable(filename, `server answered ${answer.status}`, true, { status: answer.status });
}

async function fromUrl(spec: AttachmentSpec, options: AttachmentFetcherOptions): Promise<Buffer> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  const isForbidden = options.allowPrivateAddresses ? null : (options.isForbiddenAddress ?? isForbiddenAddress);
  const lookup = isForbidden === null ? undefined : createGuardedLookup(isForbidden);
  let url = parseUrl(spec.storagePath, spec.filename);
  for (let hop = 0; ; hop += 1) {
    // Every hop is checked again: a redirect may point anywhere.
    const refusal = refuseUrl(url, isForbidden);
    if (refusal !== null) throw attachmentUnavailable(spec.filename, refusal, false);
    const answer = await exchangeHttp({
      url,
      method: 'GET',
      headers: {},
      body: null,
      signal,
      maxBytes: options.maxBytes,
      filename: spec.filename,
      lookup,
    });
    const location = answer.headers.location;
    if (!REDIRECT_STATUSES.has(answer.status) || location === undefined) return expectSuccess(answer, spec.filename);
    if (hop === MAX_REDIRECTS)
      throw attachmentUnavailable(spec.filename, `more than ${MAX_REDIRECTS} redirects`, false);
    url = parseUrl(location, spec.filename, url);
  }
}

function authorization(auth: ClientAuth | null): Record<string, string> {
  if (auth === null || auth.method === 'none') return {};
  if (auth.method === 'bearer') return { authorization: `Bearer ${auth.token}` };
  return { authorization: `Basic ${Buffer.from(`${auth.user}:${auth.password}`, 'utf8').toString('base64')}` };
}

/** A JSON answer `{"content": "<base64>"}` carries the bytes encoded; any other answer is the bytes. */
function endpointContent(answer: HttpAnswer, filename: string): Buffer {
  const body = expectSuccess(answer, filename);
  if (!/^application\/json\b/i.test(answer.headers['content-type'] ?? '')) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return body;
  }
  const content = (parsed as { content?: unknown } | null)?.content;
  if (typeof content !== 'string') return body;
  const bytes = decodeBase64(content);
  if (bytes === null) throw attachmentUnavailable(filename, 'endpoint content is not valid base64', false);
  return bytes;
}

async function fromEndpoint(
  spec: AttachmentSpec,
  tenant: BuildRequest['tenant'],
  options: AttachmentFetcherOptions,
): Promise<Buffer> {
  const { clientBaseUrl, clientAttachmentPath } = tenant;
  if (!clientBaseUrl || !clientAttachmentPath) {
    throw attachmentUnavailable(
      spec.filename,
      'the tenant has no client_base_url and client_attachment_path for endpoint attachments',
      false,
    );
  }
  const url = parseUrl(
    `${clientBaseUrl.replace(/\/+$/, '')}/${clientAttachmentPath.replace(/^\/+/, '')}`,
    spec.filename,
  );
  // The tenant's own configured server: the scheme is checked, the private-address guard is not applied.
  const refusal = refuseUrl(url, null);
  if (refusal !== null) throw attachmentUnavailable(spec.filename, refusal, false);
  const answer = await exchangeHttp({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authorization(tenant.clientAuth) },
    body: Buffer.from(JSON.stringify({ storage_path: spec.storagePath }), 'utf8'),
    signal: AbortSignal.timeout(options.timeoutMs),
    maxBytes: options.maxBytes,
    filename: spec.filename,
  });
  return endpointContent(answer, spec.filename);
}

export function createAttachmentFetcher(options: AttachmentFetcherOptions): AttachmentFetcher {
  return {
    async fetch(spec, tenant) {
      switch (spec.fetchMode) {
        case 'base64':
          return fromBase64(spec);
        case 'http_url':
          return fromUrl(spec, options);
        case 'endpoint':
          return fromEndpoint(spec, tenant, options);
      }
    },
  };
}
