/**
 * The OpenAPI 3.1 document, built from the route descriptions: input schemas
 * by zod's own JSON Schema conversion (the input side: what a client sends,
 * before transforms), error responses derived from each route's access and
 * input, with the codes errors.ts maps to each status.
 */
import { z } from 'zod';
import { ERROR_EXAMPLES } from './error-examples.js';
import { ERROR_CODES, statusOf } from './errors.js';
import type { HttpErrorCode } from './http-error.js';
import type { Access, ResponseDoc, RouteDoc, WebhookDoc } from './route-doc.js';

export type JsonSchema = z.core.JSONSchema.JSONSchema;

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  /** The schema's own description and first example, where tools show a parameter's. */
  description?: string;
  example?: unknown;
  schema: JsonSchema;
}

interface MediaContent {
  [mediaType: string]: { schema: JsonSchema; examples?: Record<string, { summary: string; value: unknown }> };
}

type OpenApiResponses = Record<string, { description: string; content?: MediaContent }>;

export interface OpenApiOperation {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  security: Record<string, string[]>[];
  'x-mailproxy-access': Access;
  parameters: OpenApiParameter[];
  requestBody?: { required: boolean; content: MediaContent };
  responses: OpenApiResponses;
}

export interface OpenApiWebhook {
  post: Pick<OpenApiOperation, 'operationId' | 'tags' | 'summary' | 'description' | 'parameters' | 'responses'> & {
    requestBody: { required: true; content: MediaContent };
  };
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  tags: { name: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  webhooks: Record<string, OpenApiWebhook>;
  components: { securitySchemes: Record<string, object>; schemas: Record<string, JsonSchema> };
}

/** The HTTP API's contract version (bumped on an incompatible change), not the package's. */
const API_VERSION = '1';

const ACCESS_TEXT: Record<Access, string> = {
  public: 'Who may call: anyone, no token needed.',
  admin: 'Who may call: the admin token only (a tenant key gets 403).',
  tenant:
    "Who may call: the admin token, or a tenant's API key for its own tenant (another tenant's resources answer 404).",
};

const SECURITY: Record<Access, Record<string, string[]>[]> = {
  public: [],
  admin: [{ bearer: [] }, { apiKey: [] }],
  tenant: [{ bearer: [] }, { apiKey: [] }],
};

const VALIDATION = ERROR_EXAMPLES.VALIDATION_FAILED;
const errorEnvelope = z.object({
  error: z
    .object({
      code: z
        .enum(ERROR_CODES as [HttpErrorCode, ...HttpErrorCode[]])
        .meta({ description: 'stable: decide on this, not on the message', examples: ['VALIDATION_FAILED'] }),
      message: z.string().meta({ description: 'for people; may change', examples: [VALIDATION.message] }),
      details: z.unknown().meta({
        description: 'JSON or null; for VALIDATION_FAILED a list of {path, message}, one per problem',
        examples: [VALIDATION.details],
      }),
    })
    .meta({
      description: 'What went wrong; nothing of the request was applied.',
      examples: [{ code: 'VALIDATION_FAILED', message: VALIDATION.message, details: VALIDATION.details }],
    }),
});

/**
 * zod -> JSON Schema for the input side; a refinement or transform is documented as its input type.
 * zod drops the `examples` of a schema holding a transform on this side (it takes them for output
 * values); ours are written as a client sends them, so they are put back.
 */
export function inputSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      const examples = z.globalRegistry.get(zodSchema as unknown as z.ZodType)?.examples;
      if (examples !== undefined && jsonSchema.examples === undefined)
        jsonSchema.examples = examples as NonNullable<JsonSchema['examples']>;
    },
  });
  return rest;
}

/** zod -> JSON Schema for a response: what the API answers. */
function outputSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' });
  return rest;
}

/** A documented response: its schema when it has one, else any object (JSON) or text. */
function responseOf(response: ResponseDoc): OpenApiResponses[string] {
  const contentType = response.contentType ?? 'application/json';
  const fallback: JsonSchema = contentType === 'application/json' ? { type: 'object' } : { type: 'string' };
  return {
    description: response.description,
    content: { [contentType]: { schema: response.schema === undefined ? fallback : outputSchema(response.schema) } },
  };
}

/** The error envelope answered with one of `codes`, one example each. */
function errorResponseOf(codes: readonly HttpErrorCode[]): OpenApiResponses[string] {
  const examples = Object.fromEntries(
    codes.map((code) => {
      const { summary, message, details } = ERROR_EXAMPLES[code];
      return [code, { summary, value: { error: { code, message, details } } }];
    }),
  );
  return {
    description: `error ${codes.map((code) => `\`${code}\``).join(', ')}`,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples } },
  };
}

/** The codes a route can answer: every route INTERNAL, an input VALIDATION_FAILED, a token UNAUTHORIZED, ... */
function errorCodesOf(doc: RouteDoc): HttpErrorCode[] {
  const codes: HttpErrorCode[] = [];
  if (doc.params !== undefined || doc.query !== undefined || doc.body !== undefined) codes.push('VALIDATION_FAILED');
  if (doc.body !== undefined) codes.push('INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE');
  if (doc.access !== 'public') codes.push('UNAUTHORIZED', 'AUTH_THROTTLED', 'STORE_UNAVAILABLE');
  if (doc.access === 'admin') codes.push('FORBIDDEN');
  codes.push(...(doc.errors ?? []), 'INTERNAL');
  return [...new Set(codes)];
}

function responsesOf(doc: RouteDoc): OpenApiOperation['responses'] {
  const responses: OpenApiOperation['responses'] = {};
  for (const [status, response] of Object.entries(doc.responses)) responses[status] = responseOf(response);
  const byStatus = new Map<number, HttpErrorCode[]>();
  for (const code of errorCodesOf(doc)) byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code]);
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    // A documented response (the 503 of /ready) is that route's own answer, not the error envelope.
    if (String(status) in responses) continue;
    responses[String(status)] = errorResponseOf(codes);
  }
  return responses;
}

function objectProperties(
  schema: z.ZodType,
  where: string,
): { properties: Record<string, JsonSchema>; required: string[] } {
  const json = inputSchema(schema);
  if (json.type !== 'object') throw new Error(`${where}: the query schema must be an object`);
  return { properties: (json.properties ?? {}) as Record<string, JsonSchema>, required: json.required ?? [] };
}

/** A parameter, with its schema's description and first example lifted to where tools show them. */
function parameter(
  name: string,
  where: OpenApiParameter['in'],
  required: boolean,
  schema: JsonSchema,
): OpenApiParameter {
  return {
    name,
    in: where,
    required,
    ...(schema.description === undefined ? {} : { description: schema.description }),
    ...(schema.examples === undefined || schema.examples.length === 0 ? {} : { example: schema.examples[0] }),
    schema,
  };
}

function parametersOf(doc: RouteDoc): OpenApiParameter[] {
  const names = [...doc.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? '');
  const path = names.map((name): OpenApiParameter => {
    const validator = doc.params?.[name];
    return parameter(name, 'path', true, validator === undefined ? { type: 'string' } : inputSchema(validator));
  });
  const querySchema = doc.query ?? (doc.bodyOrQuery === true ? doc.body : undefined);
  if (querySchema === undefined) return path;
  const { properties, required } = objectProperties(querySchema, `${doc.method} ${doc.path}`);
  // Parameters that may come in the body too are required in neither place alone.
  const query = Object.entries(properties).map(([name, schema]) =>
    parameter(name, 'query', doc.bodyOrQuery !== true && required.includes(name), schema),
  );
  return [...path, ...query];
}

function operationOf(doc: RouteDoc): OpenApiOperation {
  const body = doc.body === undefined ? undefined : inputSchema(doc.body);
  const bodyOrQuery =
    doc.bodyOrQuery === true ? 'Parameters may come as a JSON body, a query string, or both (the body wins).' : '';
  return {
    operationId:
      doc.method +
      doc.path
        .split(/[^A-Za-z0-9]+/)
        .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
        .join(''),
    tags: [doc.tag],
    summary: doc.summary,
    description: [doc.description ?? '', bodyOrQuery, ACCESS_TEXT[doc.access]]
      .filter((text) => text !== '')
      .join('\n\n'),
    security: SECURITY[doc.access],
    'x-mailproxy-access': doc.access,
    parameters: parametersOf(doc),
    // An absent body reads as {}, so a body is required only when it has required fields.
    ...(body === undefined
      ? {}
      : {
          requestBody: {
            required: doc.bodyOrQuery !== true && (body.required ?? []).length > 0,
            content: { 'application/json': { schema: body } },
          },
        }),
    responses: responsesOf(doc),
  };
}

function webhookOf(doc: WebhookDoc): OpenApiWebhook {
  const responses: OpenApiResponses = {};
  for (const [status, response] of Object.entries(doc.responses)) responses[status] = responseOf(response);
  return {
    post: {
      operationId: doc.name,
      tags: ['Webhooks'],
      summary: doc.summary,
      description: doc.description,
      parameters: Object.entries(doc.headers).map(([name, header]) => ({
        name,
        in: 'header',
        required: header.required,
        description: header.description,
        example: header.example,
        schema: { type: 'string', description: header.description, examples: [header.example] },
      })),
      requestBody: { required: true, content: { 'application/json': { schema: outputSchema(doc.body) } } },
      responses,
    },
  };
}

export function buildOpenApiDocument(
  routes: readonly RouteDoc[],
  webhooks: readonly WebhookDoc[] = [],
): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const doc of routes) {
    const operations = (paths[doc.path] ??= {});
    if (operations[doc.method] !== undefined) throw new Error(`${doc.method} ${doc.path} is described twice`);
    operations[doc.method] = operationOf(doc);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'mailproxy HTTP API',
      version: API_VERSION,
      description:
        'Authenticate with `Authorization: Bearer <token>` or `X-API-Token: <token>`. Bodies are JSON; unknown fields are rejected. Errors are always `{"error":{"code","message","details"}}` with a stable `code`.',
    },
    tags: [...new Set(routes.map((doc) => doc.tag))].map((name) => ({ name })),
    paths,
    webhooks: Object.fromEntries(webhooks.map((doc) => [doc.name, webhookOf(doc)])),
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'the admin token or a tenant API key' },
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Token',
          description: 'the same tokens, in a header of their own',
        },
      },
      schemas: { Error: inputSchema(errorEnvelope) },
    },
  };
}
