/**
 * The one typed JSON codec over what the daemon writes to NATS: KV values, stream records and
 * request/reply bodies. What is written is `JSON.stringify` as UTF-8, the bytes every earlier
 * version wrote, so existing data still reads; what is read is checked against a zod schema, and a
 * value that is not JSON or not of the expected shape is a coded error, never a cast.
 */
import type { z } from 'zod';
import { AppError } from '../core/index.js';

/** `WIRE_NOT_JSON`: the bytes are not JSON. `WIRE_SHAPE`: JSON, but not the value expected there. */
export type WireErrorCode = 'WIRE_NOT_JSON' | 'WIRE_SHAPE';
export type WireError = AppError<WireErrorCode>;

/** A read as data: the value, or why the bytes hold none. */
export type Decoded<T> = { ok: true; value: T } | { ok: false; error: WireError };

export interface JsonCodec<T> {
  encode(value: T): Uint8Array;
  /** The value the bytes hold; throws a WireError when they hold none. */
  decode(bytes: Uint8Array): T;
  /** `decode` with the error as data. */
  read(bytes: Uint8Array): Decoded<T>;
  /** A value already parsed from JSON (a request nats.js decoded), checked as `read` checks. */
  check(value: unknown): Decoded<T>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** A hostile value can fail in many places: a few issues say enough, and keep the error small. */
const MAX_ISSUES = 5;

/** Whether an error is the codec's: a value read from NATS that was not one of ours. */
export const isWireError = (error: unknown): error is WireError =>
  error instanceof AppError && (error.code === 'WIRE_NOT_JSON' || error.code === 'WIRE_SHAPE');

/** `what` names the value in errors (`claim record`, `config value`). */
export function jsonCodec<T>(schema: z.ZodType<T>, what: string): JsonCodec<T> {
  const check = (value: unknown): Decoded<T> => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return { ok: true, value: parsed.data };
    const issues = parsed.error.issues
      .slice(0, MAX_ISSUES)
      .map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
    return {
      ok: false,
      error: new AppError<WireErrorCode>('WIRE_SHAPE', `not a ${what}`, { details: { what, issues } }),
    };
  };
  const read = (bytes: Uint8Array): Decoded<T> => {
    let value: unknown;
    try {
      value = JSON.parse(decoder.decode(bytes));
    } catch (error) {
      return {
        ok: false,
        error: new AppError<WireErrorCode>('WIRE_NOT_JSON', `a ${what} that is not JSON`, {
          details: { what },
          cause: error,
        }),
      };
    }
    return check(value);
  };
  return {
    encode: (value) => encoder.encode(JSON.stringify(value)),
    decode(bytes) {
      const decoded = read(bytes);
      if (!decoded.ok) throw decoded.error;
      return decoded.value;
    },
    read,
    check,
  };
}
