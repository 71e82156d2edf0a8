/**
 * Reading a provider's JSON without trusting its shape: each field is taken
 * only when it has the type expected, and anything else reads as absent.
 */
import { timingSafeEqual } from 'node:crypto';

export type Json = Record<string, unknown>;

/** The body as JSON, or null when it is not JSON at all. */
export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return null;
  }
}

export function objectOf(value: unknown): Json | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null;
}

/** A non-empty string, trimmed; null otherwise. */
export function text(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/** A number, or a string holding one (providers write codes and timestamps both ways). */
export function numberOf(value: unknown): number | null {
  const number =
    typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  return Number.isFinite(number) ? number : null;
}

/** An ISO time as ms, or null. */
export function instantOf(value: unknown): number | null {
  const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isFinite(at) ? at : null;
}

/** Compares secrets in constant time (unequal lengths answer false at once: the length is not the secret). */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The header a provider echoes our X-Genro-Mail-ID in, as custom metadata (user variables, custom args, tags). */
export const MAIL_ID_KEY = 'genro_mail_id';
