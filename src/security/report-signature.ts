/**
 * The signature of a delivery report, so that a client can tell a report came
 * from us and is fresh. Header (the scheme Stripe and others made familiar):
 *
 *   X-Mailproxy-Signature: t=<epoch seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
 *
 * The timestamp is inside the MAC, so a captured report cannot be replayed
 * later with a new time; a client refuses one older than a few minutes.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-mailproxy-signature';
export const DEFAULT_TOLERANCE_SECONDS = 300;

const mac = (secret: string, timestamp: number, body: string): string =>
  createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(body, 'utf8').digest('hex');

/** A new random signing secret (32 bytes), shown to the operator once. */
export function newSigningSecret(): string {
  return `mps_${randomBytes(32).toString('base64url')}`;
}

export function signReport(secret: string, body: string, timestamp: number): string {
  return `t=${timestamp},v1=${mac(secret, timestamp, body)}`;
}

/**
 * What a client does with the header: true only when some `v1` matches the body
 * under `secret` and `t` lies within `toleranceSeconds` of `now` (epoch seconds).
 */
export function verifyReportSignature(
  secret: string,
  body: string,
  header: string,
  now: number,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
): boolean {
  const parts = header.split(',').map((part) => part.trim().split('='));
  const timestamp = Number(parts.find(([key]) => key === 't')?.[1]);
  if (!Number.isInteger(timestamp) || Math.abs(now - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(mac(secret, timestamp, body), 'hex');
  return parts
    .filter(([key, value]) => key === 'v1' && value !== undefined && /^[0-9a-f]{64}$/.test(value))
    .some(([, value]) => timingSafeEqual(Buffer.from(value as string, 'hex'), expected));
}
