/**
 * The tools an agent is offered, each one API route (ingress/http's route table): its input
 * schema is the route's own (path parameters, then its query or body), its result the route's
 * answer. What a tool may do is what the route lets the caller do: a tenant key reaches its own
 * tenant only, another tenant's message answers as an unknown id does.
 */
import { z } from 'zod';
import { ACCOUNT_ROUTES, BOUNCE_ROUTES, MESSAGE_READ_ROUTES, MESSAGE_ROUTES, STATUS_ROUTES } from '../http/index.js';
import type { ApiRequest } from './api-call.js';

/** A route as a tool reads it (ingress/http's RouteDoc). */
interface Route {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  summary: string;
  params?: Readonly<Record<string, z.ZodType>>;
  query?: z.ZodType;
  body?: z.ZodType;
}

export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  /** Sends, changes or deletes something: not offered in read-only mode, and marked so for clients. */
  changes: boolean;
  /** Undoes nothing it can be asked again to do (a resend sends twice, a removed suppression is gone). */
  destructive: boolean;
  input: z.ZodObject;
  request(input: Record<string, unknown>): ApiRequest;
}

const shapeOf = (schema: z.ZodType | undefined): z.ZodRawShape =>
  schema instanceof z.ZodObject ? (schema.shape as z.ZodRawShape) : {};

/** The route's path parameters, then its query or body fields, as one object (strict, as the API is). */
function inputOf(route: Route): z.ZodObject {
  return z.strictObject({ ...(route.params ?? {}), ...shapeOf(route.query), ...shapeOf(route.body) });
}

/** Query values as the API reads them from a URL: text, lists comma-joined. */
function queryOf(fields: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fields)
      .filter(([, value]) => value !== undefined && value !== null)
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : String(value)]),
  );
}

/** The request of a route for a tool's input: path parameters in the path, the rest in the query or the body. */
function requestOf(route: Route, input: Record<string, unknown>): ApiRequest {
  const rest = { ...input };
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = rest[name];
    delete rest[name];
    return encodeURIComponent(String(value ?? ''));
  });
  const method = route.method.toUpperCase() as ApiRequest['method'];
  return route.body === undefined ? { method, path, query: queryOf(rest) } : { method, path, body: rest };
}

function tool(
  name: string,
  title: string,
  what: string,
  route: Route,
  effect: { changes: boolean; destructive?: boolean } = { changes: false },
): ToolSpec {
  return {
    name,
    title,
    description: `${what} (${route.method.toUpperCase()} ${route.path}: ${route.summary}).`,
    changes: effect.changes,
    destructive: effect.destructive ?? false,
    input: inputOf(route),
    request: (input) => requestOf(route, input),
  };
}

const M = MESSAGE_ROUTES;
const R = MESSAGE_READ_ROUTES;
const B = BOUNCE_ROUTES;

export const TOOLS: readonly ToolSpec[] = [
  tool(
    'message_status',
    'Message status and timeline',
    "A message's state, every event of its timeline, and why it is still waiting if it is",
    R.detail,
  ),
  tool('search_messages', 'Search messages', 'Messages by status, batch, dates or words, newest first', R.search),
  tool(
    'queue_status',
    'Queue status',
    'The queue now: waiting messages by state and account, throughput, and what is unwell',
    STATUS_ROUTES.status,
  ),
  tool('list_accounts', 'Accounts', "The tenant's relay accounts, their limits, usage and health", ACCOUNT_ROUTES.list),
  tool('list_suppressions', 'Suppressions', 'Recipients that get no more mail, and why', B.suppressions),
  tool(
    'bounce_records',
    'Bounce mailbox',
    'What the bounce mailbox read, newest first: bounces, complaints, unmatched mail',
    B.bounces,
  ),
  tool(
    'send_messages',
    'Send messages',
    'Queue messages for sending, as POST /add-messages takes them',
    M.addMessages,
    {
      changes: true,
    },
  ),
  tool('retry_now', 'Retry now', 'Waiting messages tried again at once', M.retryNow, { changes: true }),
  tool('resend', 'Resend', 'Sent or failed messages sent again', M.resend, { changes: true, destructive: true }),
  tool('suspend', 'Suspend', 'Hold a tenant, or one batch of it, from sending', M.suspend, { changes: true }),
  tool('activate', 'Activate', 'Let a suspended tenant or batch send again', M.activate, { changes: true }),
  tool('add_suppression', 'Suppress a recipient', 'Stop all mail to a recipient', B.suppress, { changes: true }),
  tool('remove_suppression', 'Remove a suppression', 'Let mail go to a suppressed recipient again', B.unsuppress, {
    changes: true,
    destructive: true,
  }),
  tool(
    'test_account',
    'Test an account',
    "Connect to an account's relay and log in, sending nothing",
    ACCOUNT_ROUTES.test,
    { changes: false },
  ),
];

/** The bulk action's route: its tool is built apart (bulk-tool.ts), with its confirm step. */
export const BULK_ROUTE = M.bulk;
export { inputOf, requestOf };
