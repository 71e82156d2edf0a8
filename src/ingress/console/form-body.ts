/**
 * A console form's fields, read by the API's one body reader (ingress/http/request-body.ts)
 * under the console's form limit. Forms come url-encoded, as a browser sends them; any other
 * media type (a multipart upload) is refused unread, since no console form takes one.
 */
import type { Context } from 'hono';
import { transportError, requestBody } from '../http/index.js';
import type { ConsoleEnv } from './env.js';

const FORM_TYPE = 'application/x-www-form-urlencoded';
const textDecoder = new TextDecoder();

/** The form's fields by name; a field given twice keeps its last value. */
export async function readForm(c: Context<ConsoleEnv>): Promise<Record<string, string>> {
  const mediaType = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== undefined && mediaType !== FORM_TYPE) {
    throw transportError('UNSUPPORTED_MEDIA_TYPE', `a console form is sent as ${FORM_TYPE}`, {
      details: { content_type: mediaType },
    });
  }
  return Object.fromEntries(new URLSearchParams(textDecoder.decode(await requestBody(c))));
}
