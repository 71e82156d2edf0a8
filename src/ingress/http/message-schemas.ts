/**
 * Schemas of /add-messages and the /commands/* routes: the batch envelope, whose messages are each
 * checked on their own (message-item-schema.ts), and the commands' parameters.
 */
import { z } from 'zod';
import { isAddrSpec } from '../../core/index.js';
import { clientId, headerText, PRIORITY_TEXT, priority } from './message-fields.js';
import { messageItem } from './message-item-schema.js';
import { tenantScope } from './schemas.js';

// Their importers (routes, the submission parser and mapping) keep reading them from here.
export { clientId, priorityQuery } from './message-fields.js';
export { messageItem, type MessageItem } from './message-item-schema.js';

/** The message both forms of the /add-messages body show as their example. */
const INVOICE_EXAMPLE = {
  id: 'inv-2025-001',
  from: 'billing@acme.example',
  to: 'ann@example.net',
  subject: 'Your invoice',
  body: 'Attached.',
};

export const addMessagesBody = z
  .object({
    messages: z.array(z.unknown()).meta({
      description:
        'The messages, at most `http.max_batch_messages` (1000): each validated on its own (the items below), an invalid one rejected without the others.',
      examples: [[INVOICE_EXAMPLE]],
    }),
    default_priority: priority
      .optional()
      .meta({ description: `The priority of a message that gives none: ${PRIORITY_TEXT}. Absent: 2.`, examples: [2] }),
  })
  .strict();

/**
 * The /add-messages body as documented: the request's shape from `addMessagesBody`, each message as
 * `messageItem` checks it (on its own, after the shape: a bad message is rejected, not the request).
 */
export const addMessagesDocumented = addMessagesBody.extend({
  messages: z.array(messageItem).meta({
    description:
      'The messages, at most `http.max_batch_messages` (1000): each validated on its own, an invalid one rejected (listed in `rejected`) without the others.',
    examples: [[INVOICE_EXAMPLE]],
  }),
});

const idList = (description: string) =>
  z
    .union([
      z.array(clientId),
      z.string().transform((text) =>
        text
          .split(',')
          .map((id) => id.trim())
          .filter((id) => id !== ''),
      ),
    ])
    .meta({
      description: `${description}: 1-10000 client ids, a list or comma-separated text.`,
      examples: [['inv-2025-001', 'inv-2025-002']],
    })
    .pipe(z.array(clientId).min(1).max(10_000));
const batch = headerText(128)
  .min(1)
  .optional()
  .meta({
    description: 'The `batch_code` of the messages; absent or `*`: the whole tenant.',
    examples: ['newsletter-2025-05'],
  });
const tenant = () => tenantScope('required');

export const tenantParams = z.object({ tenant_id: tenant() }).strict();
export const batchParams = z.object({ tenant_id: tenant(), batch_code: batch }).strict();
export const deleteIdsParams = z
  .object({ tenant_id: tenant(), ids: idList('The messages to delete (not one being sent)') })
  .strict();
export const resendIdsParams = z
  .object({ tenant_id: tenant(), ids: idList('The messages to send again (sent or failed ones)') })
  .strict();
/** POST /commands/erase: exactly one of `ids`, `address` or `whole_tenant`. */
export const eraseParams = z
  .object({
    tenant_id: tenantScope('every tenant').meta({
      description:
        'The tenant: implied by a tenant key (naming another tenant answers 404). With the admin token, an `address` is erased in every tenant when none is named; `ids` and `whole_tenant` need one.',
      examples: ['acme'],
    }),
    ids: idList('The messages to erase').optional(),
    address: z
      .string()
      .max(254)
      .refine(isAddrSpec, { message: 'invalid address' })
      .optional()
      .meta({
        description: 'Everything to or from this address: its messages, suppressions, bounce and PEC records.',
        examples: ['ann@example.net'],
      }),
    whole_tenant: z
      .literal(true)
      .optional()
      .meta({
        description: 'Every message of the tenant, and its suppressions and mailbox records.',
        examples: [true],
      }),
  })
  .strict()
  .refine((p) => [p.ids, p.address, p.whole_tenant].filter((given) => given !== undefined).length === 1, {
    message: 'give exactly one of ids, address or whole_tenant',
  });
export const cleanupParams = z
  .object({
    tenant_id: tenant(),
    older_than_seconds: z.coerce
      .number()
      .int()
      .nonnegative()
      .max(10 * 365 * 86400)
      .meta({
        description:
          'Removes the messages whose outcome (and bounce, if any) was reported to the client more than this many seconds ago; at most ten years.',
        examples: [2592000],
      }),
  })
  .strict();
