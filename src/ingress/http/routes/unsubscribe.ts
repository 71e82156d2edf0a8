/**
 * One-click unsubscribe links (RFC 8058): public, since the recipient holds no
 * key; the token is the proof (sealed: core/tenant/list-unsubscribe.ts). A GET
 * answers a page with a button and changes nothing (scanners and previews
 * fetch links); a POST, the mailbox provider's one click or that button,
 * unsubscribes. Both pages are self-contained HTML: no script, nothing loaded.
 */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { AppError, escapeHtml } from '../../../core/index.js';
import type { UnsubscribePreview, UnsubscribeService } from '../../../core/tenant/index.js';
import type { HttpEnv } from '../env.js';
import { requestBody } from '../request-body.js';
import { on, type RouteDoc } from '../route-doc.js';

const token = z
  .string()
  .meta({ description: 'The token of the link, as the message carried it.', examples: ['v1.3q2-N0u1.Zm9v.YmFy'] });

const html = (description: string) => ({ description, contentType: 'text/html' });

export const UNSUBSCRIBE_ROUTES = {
  page: {
    method: 'get',
    path: '/unsubscribe/{token}',
    tag: 'Unsubscribe',
    summary: 'The confirmation page of a one-click unsubscribe link: it changes nothing',
    description:
      'What a person sees who opens the link of a `List-Unsubscribe` header in a browser: who sends the mail, to which recipient (its local part hidden), and a button that POSTs to the same URL. ' +
      'Never unsubscribes by itself: link scanners and previews fetch links. A link that does not open (forged, altered, or its tenant deleted) answers 404.',
    access: 'public',
    params: { token },
    responses: { 200: html('the confirmation page') },
    errors: ['NOT_FOUND'],
  },
  unsubscribe: {
    method: 'post',
    path: '/unsubscribe/{token}',
    tag: 'Unsubscribe',
    summary: "Unsubscribes the link's recipient: the mailbox provider's one click (RFC 8058), or the page's button",
    description:
      "The recipient the link names goes on the tenant's suppression list (source `unsubscribe`; no mail is sent to them again until an operator removes the entry), shared by every fleet node, whichever node is asked. " +
      'The message the link came in records an `unsubscribed` event, reported to the client application, once however often the link is followed. ' +
      'The body (`List-Unsubscribe=One-Click`, form-encoded) is read under a small limit and not needed. A link that does not open answers 404 and changes nothing.',
    access: 'public',
    params: { token },
    responses: { 200: html('unsubscribed: a page that says so') },
    errors: ['NOT_FOUND', 'PAYLOAD_TOO_LARGE', 'UNAVAILABLE'],
  },
} as const satisfies Record<string, RouteDoc>;

/** The limit of a one-click POST's body: `List-Unsubscribe=One-Click`, in whatever form encoding. */
export const UNSUBSCRIBE_MAX_BODY_BYTES = 4096;

// The form posts to this very URL; nothing else is loaded or run.
const PAGE_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}
button{font:inherit;padding:.5rem 1.25rem;border:0;border-radius:4px;background:#0b5394;color:#fff;cursor:pointer}</style>
</head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

const whom = (preview: UnsubscribePreview): string =>
  `<strong>${escapeHtml(preview.recipient)}</strong> from <strong>${escapeHtml(preview.sender)}</strong>` +
  (preview.list === null ? '' : ` (${escapeHtml(preview.list)})`);

const confirmPage = (preview: UnsubscribePreview): string =>
  page(
    'Unsubscribe',
    `<p>Stop mail to ${whom(preview)}?</p><form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
  );

const donePage = (preview: UnsubscribePreview): string =>
  page('Unsubscribed', `<p>No more mail will be sent to ${whom(preview)}.</p>`);

/** The same for a forged token, an altered one and a deleted tenant's: whoever holds it learns nothing. */
const unknownLink = (): AppError =>
  new AppError('NOT_FOUND', 'no such unsubscribe link', { details: { reason: 'unsubscribe_link_unknown' } });

const answer = (c: Context<HttpEnv>, text: string) => {
  c.header('Content-Security-Policy', PAGE_POLICY);
  c.header('Referrer-Policy', 'no-referrer');
  return c.html(text);
};

export function unsubscribeRoutes(service: UnsubscribeService): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  on(app, UNSUBSCRIBE_ROUTES.page, (c) => {
    const preview = service.preview(c.req.param('token') ?? '');
    if (!preview.ok) throw unknownLink();
    return answer(c, confirmPage(preview.value));
  });
  on(app, UNSUBSCRIBE_ROUTES.unsubscribe, async (c) => {
    // Read (under its limit) only so that the connection stays usable; the token alone decides.
    await requestBody(c);
    const done = await service.unsubscribe(c.req.param('token') ?? '', c.get('requestId'));
    if (!done.ok) throw unknownLink();
    return answer(c, donePage(done.value));
  });
  return app;
}
