/**
 * Reading request input: JSON bodies and query strings validated by zod.
 * Every failure becomes an AppError with the offending fields in `details`.
 */
import type { Context } from 'hono';
import type { z } from 'zod';
import { AppError, errorText } from '../../core/index.js';
import type { HttpEnv } from './env.js';
import { transportError } from './http-error.js';
import { requestBody } from './request-body.js';
import { ILL_FORMED, illFormedPath } from './well-formed.js';

const textDecoder = new TextDecoder();

export interface FieldProblem {
  path: string;
  message: string;
}

export function fieldProblems(error: z.ZodError): FieldProblem[] {
  return error.issues.flatMap((issue) => {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: base === '' ? key : `${base}.${key}`, message: 'unknown field' }));
    }
    return [{ path: base, message: issue.message }];
  });
}

export function validate<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new AppError('VALIDATION_FAILED', `invalid ${what}`, { details: fieldProblems(parsed.error) });
  }
  return parsed.data;
}

/** Refuses a body declared as anything but JSON (an absent content type is taken as JSON). */
export function requireJson(c: Context): void {
  const type = c.req.header('content-type');
  if (type !== undefined && !/^application\/([\w.+-]+\+)?json\b/i.test(type)) {
    throw transportError('UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json', {
      details: { content_type: type },
    });
  }
}

/** Parses the body as JSON. An absent body reads as `{}` so that optional-only bodies may be omitted. */
export async function readJson(c: Context<HttpEnv>): Promise<unknown> {
  requireJson(c);
  const text = textDecoder.decode(await requestBody(c));
  if (text.trim() === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch (error) {
    throw transportError('INVALID_JSON', 'the body is not valid JSON', {
      details: { reason: errorText(error) },
    });
  }
  const illFormed = illFormedPath(json);
  if (illFormed !== null)
    throw new AppError('VALIDATION_FAILED', 'invalid request body', {
      details: [{ path: illFormed, message: ILL_FORMED }],
    });
  return json;
}

export async function readBody<S extends z.ZodType>(c: Context<HttpEnv>, schema: S): Promise<z.output<S>> {
  return validate(schema, await readJson(c), 'request body');
}

export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return validate(schema, c.req.query(), 'query parameters');
}
