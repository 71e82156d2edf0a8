/**
 * A local stand-in for Amazon SNS's HTTPS side: a self-signed HTTPS peer on
 * 127.0.0.1 serving an SNS signing certificate (SigningCertURL) and a
 * subscription URL (SubscribeURL), and a signer that writes SNS messages as AWS
 * documents them (signature versions 1 and 2). The daemon is told to trust the
 * peer's CA (`webhooks.sns_ca_file`) and its host (`webhooks.sns_certificate_host`).
 */
import { randomUUID, sign } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfSigned } from './self-signed.js';

export interface SnsPublisher {
  /** The PEM file of the HTTPS peer's certificate: `webhooks.sns_ca_file`. */
  caFile: string;
  /** `webhooks.sns_certificate_host` matching the peer. */
  hostPattern: string;
  /** A signed Notification whose Message is `message` (JSON-encoded when not a string). */
  notification(
    topicArn: string,
    message: unknown,
    options?: { id?: string; version?: '1' | '2'; timestamp?: string },
  ): Record<string, string>;
  /** A signed SubscriptionConfirmation; its SubscribeURL is counted in `confirmations` when visited (`broken`: it answers 500). */
  confirmation(topicArn: string, broken?: boolean): Record<string, string>;
  /** SubscribeURL visits, by token. */
  confirmations: Map<string, number>;
  stop(): Promise<void>;
}

/** The string SNS signs: "Key\nValue\n" for each signed key present, in AWS's documented order. */
export function stringToSign(message: Record<string, string>): string {
  const keys =
    message.Type === 'Notification'
      ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return keys
    .filter((key) => message[key] !== undefined)
    .map((key) => `${key}\n${message[key]}\n`)
    .join('');
}

export async function startSnsPublisher(): Promise<SnsPublisher> {
  const dir = await mkdtemp(join(tmpdir(), 'sns-peer-'));
  const tls = await selfSigned(dir, 'tls', '127.0.0.1');
  const signing = await selfSigned(dir, 'signing', 'sns.us-east-1.amazonaws.com');
  const confirmations = new Map<string, number>();
  const server = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    const url = new URL(request.url ?? '/', 'https://127.0.0.1');
    if (url.pathname === '/SimpleNotificationService-test.pem') return void response.end(signing.cert);
    if (url.pathname === '/confirm-broken') return void response.writeHead(500).end();
    if (url.pathname === '/confirm') {
      const token = url.searchParams.get('Token') ?? '';
      confirmations.set(token, (confirmations.get(token) ?? 0) + 1);
      return void response.end('<ConfirmSubscriptionResponse/>');
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const signed = (fields: Record<string, string>, version: '1' | '2', timestamp: string): Record<string, string> => {
    const message = {
      Timestamp: timestamp,
      SignatureVersion: version,
      SigningCertURL: `${base}/SimpleNotificationService-test.pem`,
      ...fields,
    };
    return {
      ...message,
      Signature: sign(version === '1' ? 'sha1' : 'sha256', Buffer.from(stringToSign(message)), signing.key).toString(
        'base64',
      ),
    };
  };

  return {
    caFile: tls.certFile,
    hostPattern: String.raw`^127\.0\.0\.1$`,
    notification: (topicArn, message, options = {}) =>
      signed(
        {
          Type: 'Notification',
          MessageId: options.id ?? randomUUID(),
          TopicArn: topicArn,
          Message: typeof message === 'string' ? message : JSON.stringify(message),
        },
        options.version ?? '1',
        options.timestamp ?? new Date().toISOString(),
      ),
    confirmation(topicArn, broken = false) {
      const token = randomUUID();
      return signed(
        {
          Type: 'SubscriptionConfirmation',
          MessageId: randomUUID(),
          TopicArn: topicArn,
          Token: token,
          Message: `You have chosen to subscribe to the topic ${topicArn}.`,
          SubscribeURL: `${base}/${broken ? 'confirm-broken' : 'confirm'}?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(topicArn)}&Token=${token}`,
        },
        '1',
        new Date().toISOString(),
      );
    },
    confirmations,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
