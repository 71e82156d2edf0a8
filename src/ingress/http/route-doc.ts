/**
 * A route's description, the one source of the OpenAPI document and /docs.
 * Route modules register their handlers through `on(app, doc, handler)` and
 * validate with the schemas the description holds, so the documented method,
 * path and input schemas are the very objects that route and validate requests.
 */
import type { Handler, Hono } from 'hono';
import type { z } from 'zod';
import type { HttpEnv } from './env.js';
import type { HttpErrorCode } from './http-error.js';

/**
 * Who may call a route: nobody needs a token (`public`), the admin token only
 * (`admin`: a tenant key gets 403), or the admin token and a tenant's own key
 * (`tenant`: another tenant's resources answer 404).
 */
export type Access = 'public' | 'admin' | 'tenant';

export interface ResponseDoc {
  description: string;
  /** `application/json` unless said otherwise. */
  contentType?: string;
  /**
   * The JSON body's shape, each field with `.meta({ description, examples })`. It documents what the
   * route's view functions answer; nothing validates a response with it at run time.
   */
  schema?: z.ZodType;
}

export interface RouteDoc {
  method: 'get' | 'post' | 'put' | 'delete';
  /** The OpenAPI form (`/tenant/{id}`); hono's `:id` form is derived from it. */
  path: string;
  /** The group the route is listed under. */
  tag: string;
  summary: string;
  description?: string;
  access: Access;
  /** Validators of path parameters by name; a parameter without one is any string. */
  params?: Readonly<Record<string, z.ZodType>>;
  query?: z.ZodType;
  body?: z.ZodType;
  /** The body's fields may come in the query string as well (the body wins): `body` validates their union. */
  bodyOrQuery?: boolean;
  /** Success responses by status. Error responses are derived from the rest (see openapi-document.ts). */
  responses: Readonly<Record<number, ResponseDoc>>;
  /** Error codes this route answers beyond those derived from its access and input (CONFLICT, NOT_FOUND, ...). */
  errors?: readonly HttpErrorCode[];
}

/** A request mailproxy makes to a client application (OpenAPI `webhooks`), documented as a route is. */
export interface WebhookDoc {
  /** The key under `webhooks`. */
  name: string;
  summary: string;
  description: string;
  /** The headers mailproxy sends, by name. */
  headers: Readonly<Record<string, { description: string; required: boolean; example: string }>>;
  /** The JSON body mailproxy sends. */
  body: z.ZodType;
  /** What the client may answer, by status or range (`2XX`, `default`). */
  responses: Readonly<Record<string, ResponseDoc>>;
}

/** `/tenant/{id}` -> `/tenant/:id` */
export const honoPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');

/** Registers `handler` at the documented method and path, so the two cannot differ. */
export function on(app: Hono<HttpEnv>, doc: RouteDoc, handler: Handler<HttpEnv>): void {
  app.on(doc.method.toUpperCase(), honoPath(doc.path), handler);
}

export const json = (description: string, schema?: z.ZodType): ResponseDoc =>
  schema === undefined ? { description } : { description, schema };
