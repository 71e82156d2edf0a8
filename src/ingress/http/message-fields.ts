/**
 * The field shapes a submitted message and the /commands/* routes share: one-line header text,
 * addresses, the client id and the priority. Each carries its own rule; documentation that depends
 * on where a field sits is added there.
 */
import { z } from 'zod';
import { parseMailbox } from '../../core/index.js';
import {
  CLIENT_ID_CHARACTERS,
  CLIENT_ID_MAX_LENGTH,
  CLIENT_ID_RULE,
  PRIORITY_LABELS,
} from '../../core/message/index.js';

const NO_LINE_BREAKS = /^[^\r\n\0]*$/;
export const headerText = (max: number) => z.string().max(max).regex(NO_LINE_BREAKS, 'must not contain CR, LF or NUL');
export const mailbox = z
  .string()
  .max(998)
  .refine((text) => parseMailbox(text) !== null, { message: 'invalid address' })
  .describe('an address; "Name <addr>" allowed');
/** One address or a list; the meta sits before the transform, where zod's input-side JSON Schema reads it. */
export const mailboxes = (description: string, example: string | string[]) =>
  z
    .union([mailbox, z.array(mailbox)])
    .meta({ description, examples: [example] })
    .transform((value) => (Array.isArray(value) ? value : [value]));
/** The client id becomes the X-Genro-Mail-ID header value (core/message/client-id.ts). */
export const clientId = z.string().min(1).max(CLIENT_ID_MAX_LENGTH).regex(CLIENT_ID_CHARACTERS, CLIENT_ID_RULE);

export const PRIORITY_TEXT =
  '0 `immediate` (claimed at once, ahead of anything waiting), 1 `high`, 2 `normal`, 3 `low`: strict order between levels, FIFO within one';
export const priority = z.union([z.number().int().min(0).max(3), z.enum(PRIORITY_LABELS)]);
/** The same in a query string, where a number comes as text. */
export const priorityQuery = z.union([z.coerce.number().int().min(0).max(3), z.enum(PRIORITY_LABELS)]);
