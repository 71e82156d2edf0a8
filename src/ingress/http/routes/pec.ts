/**
 * PEC receipts: the list (a tenant key sees its own, the admin token anyone's)
 * and one receipt's original bytes, exactly as the provider's mailbox gave
 * them: the legal evidence a client keeps or hands on.
 */
import { Hono, type Context, type Env } from 'hono';
import { z } from 'zod';
import { notFound } from '../../../core/index.js';
import type { PecReceiptListing, PecReceiptReader } from '../../../core/pec/index.js';
import { viewPecReceipt } from '../views/pec-receipt-view.js';
import { scopeTenantOrAll } from '../../../core/tenant/index.js';
import type { HttpEnv } from '../env.js';
import { readQuery, validate } from '../request-input.js';
import { json, on, type RouteDoc } from '../route-doc.js';
import { receiptPage } from '../view-schemas/message-detail.js';
import { tenantScope } from '../schemas.js';

const receiptsQuery = z
  .object({
    tenant_id: tenantScope('every tenant'),
    message_id: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .meta({ description: 'Only the receipts of this message (its client id).', examples: ['atto-2025-17'] }),
    before: z.coerce
      .number()
      .int()
      .positive()
      .optional()
      .meta({ description: 'The `next` of the previous page: receipts older than it.', examples: [310] }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(1000)
      .optional()
      .meta({ description: 'Receipts per page, 1-1000. Default 100.', examples: [100] }),
  })
  .strict();
const rawQuery = z.object({ tenant_id: tenantScope('every tenant') }).strict();
const receiptId = z
  .string()
  .regex(/^[0-9a-f-]{36}$/, 'a receipt id (UUID)')
  .meta({
    description: 'The `receipt_id` of the receipt (a UUID).',
    examples: ['0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'],
  });

export const PEC_ROUTES = {
  receipts: {
    method: 'get',
    path: '/pec-receipts',
    tag: 'PEC',
    summary: "PEC receipts read from PEC accounts' mailboxes, newest first",
    description:
      'Each with `receipt_type` (the X-Ricevuta type), the message it is about (`message_id`, null when none of ours fits), `recipient`, ' +
      '`error`, `issuer`, `identificativo`, `issued_ts`, `received_ts`, `size_bytes`, `complete` and the `sha256` of its bytes. ' +
      '`message_id` filters to one message; `next` is the `before` of the next page.',
    access: 'tenant',
    query: receiptsQuery,
    responses: { 200: json('a page of receipts', receiptPage) },
  },
  receiptRaw: {
    method: 'get',
    path: '/pec-receipts/{receipt_id}/raw',
    tag: 'PEC',
    summary: "One PEC receipt's original bytes (message/rfc822), signature included",
    description:
      'Exactly the bytes the mailbox held. `X-Receipt-SHA256` is their SHA-256; `X-Receipt-Complete: false` when the receipt was larger than ' +
      '`[pec] max_receipt_bytes` and only its first bytes were kept.',
    access: 'tenant',
    params: { receipt_id: receiptId },
    query: rawQuery,
    responses: { 200: { description: 'The receipt as received', contentType: 'message/rfc822' } },
    errors: ['NOT_FOUND'],
  },
} as const satisfies Record<string, RouteDoc>;

export function pecRoutes(deps: { receipts: PecReceiptReader }): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const routes = PEC_ROUTES;

  on(app, routes.receipts, (c) => {
    const query = readQuery(c, routes.receipts.query);
    const limit = query.limit ?? 100;
    const tenantId = scopeTenantOrAll(c.get('principal'), query.tenant_id);
    const rows = deps.receipts.list({
      tenantId,
      clientId: query.message_id ?? null,
      before: query.before ?? null,
      limit,
    });
    return c.json({
      receipts: rows.map(({ seq: _seq, ...receipt }) => viewPecReceipt(receipt)),
      next: rows.length === limit ? (rows[rows.length - 1]?.seq ?? null) : null,
    });
  });

  on(app, routes.receiptRaw, (c) => {
    const query = readQuery(c, routes.receiptRaw.query);
    const id = validate(routes.receiptRaw.params.receipt_id, c.req.param('receipt_id'), 'receipt_id');
    // Another tenant's receipt is as absent as one that never was.
    const found = deps.receipts.raw(id, scopeTenantOrAll(c.get('principal'), query.tenant_id));
    if (found === null) throw notFound('receipt', id);
    return receiptResponse(c, found);
  });

  return app;
}

/** A receipt's bytes exactly as the mailbox held them (no copy), with their digest and whether they are whole: the API's and the console's download. */
export function receiptResponse<E extends Env>(
  c: Context<E>,
  found: { receipt: PecReceiptListing; raw: Buffer },
): Response {
  return c.body(found.raw as unknown as Uint8Array<ArrayBuffer>, 200, {
    'content-type': 'message/rfc822',
    'content-disposition': `attachment; filename="pec-receipt-${found.receipt.receiptId}.eml"`,
    'x-receipt-sha256': found.receipt.sha256,
    'x-receipt-complete': String(found.receipt.complete),
  });
}
