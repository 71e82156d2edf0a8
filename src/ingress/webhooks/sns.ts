/**
 * Amazon SNS HTTP(S) message verification, as AWS documents it in
 * "Verifying the signatures of Amazon SNS messages": the envelope's signed keys,
 * the signing certificate fetched from an allowed SNS host, the replay window.
 * Knows nothing of what the Message says (ses.ts reads it).
 */
import { X509Certificate, verify, type KeyObject } from 'node:crypto';
import { get } from 'node:https';
import { malformed, unauthorized, unavailable, type WebhookRefusal } from './adapter.js';
import { objectOf, parseJson } from './json-fields.js';

export type SnsMessageType = 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';

/** A verified SNS envelope: only what its signature covered. */
export interface SnsEnvelope {
  type: SnsMessageType;
  messageId: string;
  topicArn: string;
  message: string;
  /** Confirmations only: checked to be https on an allowed host. */
  subscribeUrl: string | null;
}

export type SnsVerdict = { ok: true; envelope: SnsEnvelope } | WebhookRefusal;

const deny = unauthorized;
const bad = malformed;

export interface SnsVerifierOptions {
  /** Hostnames SigningCertURL and SubscribeURL may name (anchor it: it is matched against the whole hostname). */
  certificateHost: RegExp;
  /** Trust anchors for the certificate fetch (tests' local peer); the system's when absent. */
  ca?: string | Buffer | undefined;
  /** How old a Timestamp may be; SNS retries HTTP deliveries for at most an hour. */
  replayWindowMs?: number;
  fetchTimeoutMs?: number;
}

export interface SnsVerifier {
  verify(body: Buffer, topicArns: ReadonlySet<string>, now: number): Promise<SnsVerdict>;
}

/** SNS messages are at most 256 KB; JSON escaping of the Message can grow it, never this far. */
const MAX_BODY_BYTES = 1024 * 1024;
const MAX_CERTIFICATE_BYTES = 64 * 1024;
/** Only certificates from allowed hosts that parse are kept; AWS rotates them rarely. */
const MAX_CACHED_CERTIFICATES = 32;
const FUTURE_SKEW_MS = 5 * 60_000;

/** The documented keys of the string to sign, in the documented (byte) order. */
const SIGNED_KEYS: Readonly<Record<SnsMessageType, readonly string[]>> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};
/** SignatureVersion 1 is SHA1withRSA, 2 is SHA256withRSA. */
const DIGESTS: Readonly<Record<string, string>> = { '1': 'sha1', '2': 'sha256' };

export function createSnsVerifier(options: SnsVerifierOptions): SnsVerifier {
  // A /g or /y pattern would make test() stateful and let every other request through.
  const hostPattern = new RegExp(options.certificateHost.source, options.certificateHost.flags.replace(/[gy]/g, ''));
  const replayWindowMs = options.replayWindowMs ?? 60 * 60_000;
  const fetchTimeoutMs = options.fetchTimeoutMs ?? 5_000;
  const certificates = new Map<string, Promise<KeyObject>>();

  const allowedUrl = (text: string): URL | null => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return null;
    }
    return url.protocol === 'https:' && hostPattern.test(url.hostname) ? url : null;
  };

  const signingKey = (url: URL): Promise<KeyObject> => {
    const cached = certificates.get(url.href);
    if (cached !== undefined) return cached;
    if (certificates.size >= MAX_CACHED_CERTIFICATES) certificates.delete(certificates.keys().next().value as string);
    const pending = fetchText(url, options.ca, fetchTimeoutMs).then(rsaKeyOf);
    certificates.set(url.href, pending);
    // A failed fetch is forgotten so that SNS's next delivery tries again.
    pending.catch(() => certificates.get(url.href) === pending && certificates.delete(url.href));
    return pending;
  };

  return {
    async verify(body, topicArns, now) {
      if (body.length > MAX_BODY_BYTES) return bad('the body is larger than any SNS message');
      const parsed = objectOf(parseJson(body));
      if (parsed === null) return bad('the body is not a JSON object');
      const signed = readSigned(parsed);
      if (signed === null)
        return deny('webhook_signature_missing', 'the SNS message lacks a field its signature needs');
      if (!topicArns.has(signed.fields.TopicArn ?? ''))
        return deny('webhook_topic_refused', 'the SNS topic is not one of the account’s');
      const certificateUrl = allowedUrl(signed.certificateUrl);
      if (certificateUrl === null)
        return deny('webhook_certificate_refused', 'SigningCertURL is not https on an allowed SNS host');
      const key = await signingKey(certificateUrl).catch(() => null);
      // Ours to fix, not the sender's: a 5xx has SNS deliver it again later, a 4xx would lose it.
      if (key === null)
        return unavailable('webhook_certificate_unavailable', 'the SNS signing certificate could not be fetched');
      if (!signatureHolds(signed, key)) return deny('webhook_signature_invalid', 'the SNS signature does not verify');
      const sentAt = Date.parse(signed.fields.Timestamp ?? '');
      if (!(now - sentAt <= replayWindowMs && sentAt - now <= FUTURE_SKEW_MS))
        return deny('webhook_replayed', 'the SNS Timestamp is outside the window');
      const subscribeUrl = signed.type === 'Notification' ? null : (signed.fields.SubscribeURL ?? null);
      if (signed.type === 'SubscriptionConfirmation' && allowedUrl(subscribeUrl ?? '') === null) {
        return deny('webhook_certificate_refused', 'SubscribeURL is not https on an allowed SNS host');
      }
      const { MessageId: messageId = '', TopicArn: topicArn = '', Message: message = '' } = signed.fields;
      return { ok: true, envelope: { type: signed.type, messageId, topicArn, message, subscribeUrl } };
    },
  };
}

interface SignedMessage {
  type: SnsMessageType;
  /** The signed keys present, by name. */
  fields: Partial<Record<string, string>>;
  digest: string;
  signature: Buffer;
  certificateUrl: string;
}

function readSigned(body: Record<string, unknown>): SignedMessage | null {
  const type = body.Type;
  if (type !== 'Notification' && type !== 'SubscriptionConfirmation' && type !== 'UnsubscribeConfirmation') return null;
  const { SignatureVersion: version, Signature: signature, SigningCertURL: certificateUrl } = body;
  if (typeof version !== 'string' || typeof signature !== 'string' || typeof certificateUrl !== 'string') return null;
  const fields: Partial<Record<string, string>> = {};
  for (const key of SIGNED_KEYS[type]) {
    const value = body[key];
    if (typeof value === 'string') fields[key] = value;
    // Subject is signed only when the publisher gave one (SNS then omits it or sends null).
    else if (key !== 'Subject') return null;
  }
  return { type, fields, digest: DIGESTS[version] ?? '', signature: Buffer.from(signature, 'base64'), certificateUrl };
}

function signatureHolds(signed: SignedMessage, key: KeyObject): boolean {
  if (signed.digest === '' || signed.signature.length === 0) return false;
  const text = SIGNED_KEYS[signed.type]
    .filter((key) => signed.fields[key] !== undefined)
    .map((key) => `${key}\n${signed.fields[key]}\n`)
    .join('');
  try {
    return verify(signed.digest, Buffer.from(text, 'utf8'), key, signed.signature);
  } catch {
    return false;
  }
}

function rsaKeyOf(pem: string): KeyObject {
  const key = new X509Certificate(pem).publicKey;
  if (key.asymmetricKeyType !== 'rsa') throw new Error('the SNS signing certificate does not hold an RSA key');
  return key;
}

/**
 * GET over https, no redirects, at most MAX_CERTIFICATE_BYTES, within timeoutMs overall: a signing
 * certificate, or (webhook-service.ts) a verified subscription's SubscribeURL, visited to confirm it.
 */
export function fetchText(url: URL, ca: string | Buffer | undefined, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | null, text = ''): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error === null) resolve(text);
      else {
        reject(error);
        request.destroy();
      }
    };
    const request = get(url, ca === undefined ? {} : { ca }, (response) => {
      const declared = Number(response.headers['content-length'] ?? '0');
      if (response.statusCode !== 200 || declared > MAX_CERTIFICATE_BYTES) {
        finish(new Error(`the certificate host answered ${response.statusCode ?? 'nothing'}`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_CERTIFICATE_BYTES) finish(new Error('the certificate is too large'));
        else chunks.push(chunk);
      });
      response.on('end', () => finish(null, Buffer.concat(chunks).toString('utf8')));
      response.on('error', (error) => finish(error));
      response.on('close', () => finish(new Error('the certificate host closed the response early')));
    });
    const timer = setTimeout(() => finish(new Error('the certificate fetch timed out')), timeoutMs);
    request.on('error', (error) => finish(error));
  });
}
