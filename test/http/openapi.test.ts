import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpApp, type HttpAppDeps } from '../../src/ingress/http/index.js';
import { documentationProblems } from '../helpers/openapi-fields.js';
import { api, startTestDaemon, type TestDaemon } from '../helpers/test-daemon.js';

interface Operation {
  summary: string;
  security: Record<string, string[]>[];
  'x-mailproxy-access': 'public' | 'admin' | 'tenant';
  parameters: { name: string; in: string; required: boolean }[];
  requestBody?: { content: Record<string, { schema: Record<string, any> }> };
  responses: Record<
    string,
    {
      description: string;
      content?: Record<string, { schema: Record<string, any>; examples?: Record<string, { value: any }> }>;
    }
  >;
}
type Paths = Record<string, Record<string, Operation>>;

/**
 * The routes createHttpApp registers, as `METHOD /openapi/{form}`. Building the
 * app only registers routes (no dependency is called), so stand-ins for its
 * dependencies give the same table the daemon serves.
 */
function registeredRoutes(): string[] {
  const app = createHttpApp({ bounces: { ledger: {}, status: () => [] } } as unknown as HttpAppDeps);
  const routes = app.routes
    .filter((route) => route.method !== 'ALL') // middleware (`app.use`), not a route
    .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, '{$1}')}`);
  return [...new Set(routes)].sort();
}

const documentedRoutes = (paths: Paths): string[] =>
  Object.entries(paths)
    .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();

const operations = (paths: Paths): [string, string, Operation][] =>
  Object.entries(paths).flatMap(([path, byMethod]) =>
    Object.entries(byMethod).map(([method, operation]): [string, string, Operation] => [method, path, operation]),
  );

/** A concrete path for a request: each `{param}` filled with an id nobody has. */
const concrete = (path: string): string => path.replace(/\{\w+\}/g, 'nobody');

describe('the OpenAPI document', () => {
  let t: TestDaemon;
  let document: { openapi: string; info: Record<string, string>; paths: Paths; components: Record<string, any> };
  let tenantKey: string;

  beforeAll(async () => {
    t = await startTestDaemon();
    const response = await api(t.url, 'GET', '/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    document = response.body;
    const created = await api(t.url, 'POST', '/tenant', { token: t.adminToken, body: { id: 'acme' } });
    expect(created.status).toBe(201);
    tenantKey = created.body.api_key;
  });
  afterAll(async () => {
    await t.stop();
    t.cleanup();
  });

  it('is served without a token and is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('gives every request and response field, parameter and header a description and an example, and every error response an example of each code', () => {
    expect(documentationProblems(document)).toEqual([]);
  });

  it('the check fails on a field without a description or an example, and on an error response without examples', () => {
    const broken = structuredClone(document);
    const body = broken.paths['/tenant']?.post?.requestBody?.content['application/json']?.schema;
    delete body?.properties.name.description;
    delete body?.properties.active.examples;
    delete broken.paths['/messages']?.get?.responses['200']?.content?.['application/json']?.schema.properties.messages
      .items.properties.subject.examples;
    delete broken.paths['/tenant/{id}']?.get?.responses['404']?.content?.['application/json']?.examples;
    expect(documentationProblems(broken).sort()).toEqual([
      'GET /messages 200(application/json).messages[].subject: no example',
      'GET /tenant/{id} 404: no example of NOT_FOUND',
      'POST /tenant body(application/json).active: no example',
      'POST /tenant body(application/json).name: no description',
    ]);
  });

  it('answers each error with its stable code, as its example shows', async () => {
    const examples = (path: string, method: string, status: string) =>
      document.paths[path]?.[method]?.responses[status]?.content?.['application/json']?.examples ?? {};
    const missing = await api(t.url, 'GET', '/tenant/nobody', { token: t.adminToken });
    expect(missing.status).toBe(404);
    const notFound = examples('/tenant/{id}', 'get', '404').NOT_FOUND?.value.error;
    expect({ ...notFound, details: Object.keys(notFound.details) }).toEqual({
      ...missing.body.error,
      details: Object.keys(missing.body.error.details),
    });
    const invalid = await api(t.url, 'POST', '/tenant', {
      token: t.adminToken,
      body: { id: 'bad id!', api_key_expires_in_seconds: 315360001 },
    });
    expect(examples('/tenant', 'post', '400').VALIDATION_FAILED?.value).toEqual({ error: invalid.body.error });
    const forbidden = await api(t.url, 'GET', '/tenants', { token: tenantKey });
    expect(examples('/tenants', 'get', '403').FORBIDDEN?.value).toEqual({ error: forbidden.body.error });
  });

  it('lists the refusals the README promises: 503 NODE_DRAINING from /add-messages, 413 PAYLOAD_TOO_LARGE from the webhooks', async () => {
    const codes = (path: string, status: string) =>
      Object.keys(document.paths[path]?.post?.responses[status]?.content?.['application/json']?.examples ?? {});
    expect(codes('/add-messages', '503')).toContain('NODE_DRAINING');
    expect(codes('/commands/add-messages', '503')).toContain('NODE_DRAINING');
    expect(codes('/webhooks/{provider}/{tenant_id}', '413')).toEqual(['PAYLOAD_TOO_LARGE']);
    // As answered: a webhook body over webhooks.max_body_bytes (1 MiB by default), before any signature is looked at.
    const tooLarge = await fetch(`${t.url}/webhooks/mailgun/acme`, {
      method: 'POST',
      body: new Uint8Array(1024 * 1024 + 1),
    });
    expect(tooLarge.status).toBe(413);
    expect(((await tooLarge.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('describes every route the app serves, and no route it does not', () => {
    const served = registeredRoutes();
    const documented = documentedRoutes(document.paths);
    expect(served.length).toBeGreaterThan(30);
    expect(
      served.filter((route) => !documented.includes(route)),
      'served but missing from /openapi.json',
    ).toEqual([]);
    expect(
      documented.filter((route) => !served.includes(route)),
      'documented but not served',
    ).toEqual([]);
  });

  it('answers every documented operation on the running daemon (none falls through to "no such route")', async () => {
    for (const [method, path] of operations(document.paths)) {
      const response = await api(t.url, method.toUpperCase(), concrete(path), { token: t.adminToken });
      expect(response.body?.error?.message, `${method.toUpperCase()} ${path}`).not.toBe('no such route');
    }
  });

  it('gives every operation a summary, a success response, its path parameters and the auth schemes it needs', () => {
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['apiKey', 'bearer']);
    expect(document.components.securitySchemes.apiKey).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Token',
    });
    for (const [method, path, operation] of operations(document.paths)) {
      const label = `${method.toUpperCase()} ${path}`;
      expect(operation.summary, label).not.toBe('');
      expect(
        Object.keys(operation.responses).some((status) => status.startsWith('2')),
        label,
      ).toBe(true);
      const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      expect(
        operation.parameters.filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name),
        label,
      ).toEqual(pathParams);
      if (operation['x-mailproxy-access'] === 'public') expect(operation.security, label).toEqual([]);
      else expect(operation.security, label).toEqual([{ bearer: [] }, { apiKey: [] }]);
      if (operation['x-mailproxy-access'] !== 'public') expect(operation.responses['401'], label).toBeDefined();
    }
  });

  it('says truly who may call each route', async () => {
    for (const [method, path, operation] of operations(document.paths)) {
      const label = `${method.toUpperCase()} ${path}`;
      const access = operation['x-mailproxy-access'];
      if (access === 'public') {
        expect([401, 403], `${label} without a token`).not.toContain(
          (await api(t.url, method.toUpperCase(), path)).status,
        );
        continue;
      }
      expect((await api(t.url, method.toUpperCase(), concrete(path))).status, `${label} without a token`).toBe(401);
      const asTenant = await api(t.url, method.toUpperCase(), concrete(path), { token: tenantKey });
      if (access === 'admin') expect(asTenant.status, `${label} with a tenant key`).toBe(403);
      else expect([401, 403], `${label} with a tenant key`).not.toContain(asTenant.status);
    }
  });

  it('documents the very schema that validates a body: its bounds hold on both sides', async () => {
    const body = document.paths['/tenant']?.post?.requestBody?.content['application/json']?.schema;
    const expiry = body?.properties.api_key_expires_in_seconds;
    expect(body?.required).toEqual(['id']);
    expect(expiry).toMatchObject({ type: 'integer', maximum: expect.any(Number) });
    const over = await api(t.url, 'POST', '/tenant', {
      token: t.adminToken,
      body: { id: 'over', api_key_expires_in_seconds: expiry.maximum + 1 },
    });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ path: 'api_key_expires_in_seconds' }],
    });
    const at = await api(t.url, 'POST', '/tenant', {
      token: t.adminToken,
      body: { id: 'at', api_key_expires_in_seconds: expiry.maximum },
    });
    expect(at.status).toBe(201);
    expect(new RegExp(body?.properties.id.pattern).test('bad id!')).toBe(false);
    expect(
      (await api(t.url, 'POST', '/tenant', { token: t.adminToken, body: { id: 'bad id!' } })).body.error.code,
    ).toBe('VALIDATION_FAILED');
    expect(body?.additionalProperties).toBe(false);
    expect(
      (await api(t.url, 'POST', '/tenant', { token: t.adminToken, body: { id: 'extra', surprise: 1 } })).body.error
        .code,
    ).toBe('VALIDATION_FAILED');
  });

  it("documents a PEC account's fields of /account as the schema that validates them", async () => {
    const body = document.paths['/account']?.post?.requestBody?.content['application/json']?.schema;
    for (const field of [
      'is_pec',
      'imap_host',
      'imap_port',
      'imap_tls_mode',
      'imap_user',
      'imap_password',
      'imap_folder',
    ])
      expect(body?.properties, field).toHaveProperty(field);
    expect(body?.properties.imap_tls_mode.enum).toEqual(['implicit', 'starttls', 'none']);
    const folder = body?.properties.imap_folder;
    const at = await api(t.url, 'POST', '/account', {
      token: tenantKey,
      body: {
        id: 'box',
        host: 'smtp.example.com',
        imap_host: 'imap.example.com',
        imap_folder: 'x'.repeat(folder.maxLength),
      },
    });
    expect(at.status).toBe(201);
    const over = await api(t.url, 'POST', '/account', {
      token: tenantKey,
      body: { id: 'box', host: 'smtp.example.com', imap_folder: 'x'.repeat(folder.maxLength + 1) },
    });
    expect(over.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'imap_folder' }] });
  });

  it('documents the very schema that validates a query string', async () => {
    const limit = document.paths['/messages']?.get?.parameters.find((parameter) => parameter.name === 'limit') as
      { schema: { maximum: number } } | undefined;
    expect(limit?.schema.maximum).toBe(500);
    expect((await api(t.url, 'GET', `/messages?limit=${limit?.schema.maximum}`, { token: t.adminToken })).status).toBe(
      200,
    );
    const over = await api(t.url, 'GET', `/messages?limit=${(limit?.schema.maximum ?? 0) + 1}`, {
      token: t.adminToken,
    });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'limit' }] });
  });

  it('documents each /add-messages message as the schema that rejects it', async () => {
    const message =
      document.paths['/add-messages']?.post?.requestBody?.content['application/json']?.schema.properties.messages.items;
    expect(message.required).toEqual(['id', 'from']);
    const maxAttachments: number = message.properties.attachments.maxItems;
    const attachments = Array.from({ length: maxAttachments + 1 }, (_, index) => ({
      filename: `f${index}.txt`,
      storage_path: 'aGk=',
      fetch_mode: 'base64',
    }));
    const response = await api(t.url, 'POST', '/add-messages', {
      token: tenantKey,
      body: { messages: [{ id: 'm1', from: 'a@example.com', to: 'b@example.com', attachments }] },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      queued: 0,
      rejected: [{ index: 0, id: 'm1', reason: expect.stringContaining('attachments') }],
    });
  });
});

describe('the docs page', () => {
  let t: TestDaemon;
  beforeAll(async () => {
    t = await startTestDaemon();
  });
  afterAll(async () => {
    await t.stop();
    t.cleanup();
  });

  it('is a self-contained HTML page naming every documented route, without a token', async () => {
    const [page, spec] = await Promise.all([api(t.url, 'GET', '/docs'), api(t.url, 'GET', '/openapi.json')]);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.text).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(page.text).not.toMatch(/<script|(?:src|href)="(?:https?:)?\/\//i);
    for (const [method, path] of operations(spec.body.paths)) {
      expect(page.text, `${method} ${path}`).toContain(`<code>${method.toUpperCase()} ${path}</code>`);
    }
    // A body field with its constraints, and the error envelope.
    expect(page.text).toContain('<code>api_key_expires_in_seconds</code>');
    expect(page.text).toContain('<code>messages[].attachments[].filename</code>');
    expect(page.text).toContain('<code>error.code</code>');
    // The delivery report a client receives: its headers and its items' fields.
    expect(page.text).toContain(
      '<h3 id="op-post-deliveryreport"><span class="method method-post">POST</span> <code>deliveryReport</code></h3>',
    );
    expect(page.text).toContain('<caption>Response 200 fields</caption>');
    expect(page.text).toContain('<code>message.next_attempt_ts</code>');
    expect(page.text).toContain('<code>X-Mailproxy-Signature</code>');
    expect(page.text).toContain('<code>delivery_report[].event_id</code>');
  });
});
