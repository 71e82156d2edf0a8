/**
 * The API's own description: GET /openapi.json and GET /docs (the same
 * document as a page). Both are public: they describe the contract every
 * client needs before it holds a key, and hold no tenant data or secret.
 */
import { Hono } from 'hono';
import { renderDocsPage } from '../docs-page.js';
import type { HttpEnv } from '../env.js';
import { buildOpenApiDocument, type OpenApiDocument } from '../openapi-document.js';
import { on, type RouteDoc, type WebhookDoc } from '../route-doc.js';

export const OPENAPI_ROUTES = {
  document: {
    method: 'get',
    path: '/openapi.json',
    tag: 'Documentation',
    summary: 'This API as an OpenAPI 3.1 document, generated from the schemas that validate requests',
    access: 'public',
    responses: { 200: { description: 'the OpenAPI document' } },
  },
  page: {
    method: 'get',
    path: '/docs',
    tag: 'Documentation',
    summary: 'The same document as a browsable HTML page',
    access: 'public',
    responses: { 200: { description: 'a self-contained HTML page', contentType: 'text/html' } },
  },
} as const satisfies Record<string, RouteDoc>;

// Inline style only: nothing loaded from elsewhere, no script at all.
const PAGE_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Built on first use, once: a daemon nobody asks for its docs never pays for the conversion. */
export function openapiRoutes(routes: readonly RouteDoc[], webhooks: readonly WebhookDoc[] = []): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  let built: OpenApiDocument | null = null;
  let page: string | null = null;
  const document = (): OpenApiDocument => (built ??= buildOpenApiDocument(routes, webhooks));
  on(app, OPENAPI_ROUTES.document, (c) => c.json(document()));
  on(app, OPENAPI_ROUTES.page, (c) => {
    page ??= renderDocsPage(document());
    c.header('Content-Security-Policy', PAGE_POLICY);
    return c.html(page);
  });
  return app;
}
