/** Submission (`/add-messages`), operator commands (`/commands/*`) and reading one message. */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { erasureParams, type FleetCommandName, type FleetMessages } from '../../../core/fleet/index.js';
import {
  type BulkCommands,
  type ErasureRequest,
  type MessageSearch,
  REJECTION_CODES,
  type MessageCommands,
  type SubmissionService,
} from '../../../core/message/index.js';
import type { IntakeTelemetry } from '../../../core/index.js';
import type { CommandContext } from '../../../core/tenant/index.js';
import type { HttpEnv } from '../env.js';
import {
  addMessagesDocumented,
  batchParams,
  cleanupParams,
  deleteIdsParams,
  eraseParams,
  resendIdsParams,
  tenantParams,
} from '../message-schemas.js';
import { BULK_MAX, bulkParams, idsOf, isSet, retryNowParams } from '../message-filter-schemas.js';
import { requestBody } from '../request-body.js';
import { readJson, requireJson, validate } from '../request-input.js';
import { json, on, type RouteDoc } from '../route-doc.js';
import type { SubmissionParser } from '../submission-parser.js';
import {
  activateResult,
  addMessagesResult,
  bulkResult,
  cleanupResult,
  deleteResult,
  eraseResult,
  resendResult,
  retryNowResult,
  runNowResult,
  suspendResult,
} from '../view-schemas/message.js';
import { viewRejection } from '../views/rejection-view.js';
import { filterFields } from './message-filter.js';
import { viewBulkPreview } from '../views/bulk-preview-view.js';
import { MESSAGE_READ_ROUTES, registerMessageReads } from './message-reads.js';
import { commandContext } from './tenants.js';

export interface MessageRoutesDeps {
  submissions: SubmissionService;
  commands: MessageCommands;
  /** Actions over every message a filter finds (POST /commands/bulk). */
  bulk: BulkCommands;
  parseSubmission: SubmissionParser;
  search: MessageSearch;
  intake?: IntakeTelemetry | undefined;
  /** Fleet mode: reads and commands reach every node; null or absent for a single node. */
  fleet?: FleetMessages | null;
}

const messages = { tag: 'Messages', access: 'tenant' } as const;
const addMessagesDoc = {
  ...messages,
  method: 'post',
  summary: 'Submit messages',
  description:
    "Each message is validated on its own (it needs at least one recipient in `to`, `cc` or `bcc`): an invalid one is listed in `rejected` with its reason and the valid ones of the request are committed together (fsync'd) before the answer. At most `http.max_batch_messages` (1000) messages per request. Resubmitting an id that is still waiting replaces it. " +
    "A message without `account_id` goes through the tenant's default account (`is_default`); a tenant without one rejects it with `NO_DEFAULT_ACCOUNT`, whose reason lists the tenant's accounts. " +
    `Each rejected item carries a stable \`code\` beside its \`reason\` (${REJECTION_CODES.map((code) => `\`${code}\``).join(', ')}): match on the code, the reason is for people.` +
    ' In fleet mode a node being drained (`POST /fleet/drain`) takes no new mail: it answers 503 `NODE_DRAINING` with `Retry-After`; submit to another node.',
  body: addMessagesDocumented,
  responses: { 200: json('the valid messages are committed; the others are listed in `rejected`', addMessagesResult) },
  errors: ['UNAVAILABLE', 'NODE_DRAINING'],
} as const;
const commandDoc = { ...messages, method: 'post', bodyOrQuery: true } as const;
const done = <S extends z.ZodType>(schema: S) => ({ 200: json('done', schema) });
const BATCH = 'A `batch_code` absent or `*` means the whole tenant.';

export const MESSAGE_ROUTES = {
  addMessages: { ...addMessagesDoc, path: '/add-messages' },
  addMessagesCommand: {
    ...addMessagesDoc,
    path: '/commands/add-messages',
    summary: 'Submit messages (the same as POST /add-messages)',
  },
  runNow: {
    ...commandDoc,
    path: '/commands/run-now',
    summary: 'Wake the dispatcher',
    body: tenantParams,
    responses: done(runNowResult),
  },
  suspend: {
    ...commandDoc,
    path: '/commands/suspend',
    summary: "Suspend a tenant's sending, or one batch's",
    description: BATCH,
    body: batchParams,
    responses: done(suspendResult),
  },
  activate: {
    ...commandDoc,
    path: '/commands/activate',
    summary: 'Lift a suspension',
    description: BATCH,
    body: batchParams,
    responses: done(activateResult),
  },
  deleteMessages: {
    ...commandDoc,
    path: '/commands/delete-messages',
    summary: 'Delete messages by client id',
    body: deleteIdsParams,
    responses: done(deleteResult),
  },
  resend: {
    ...commandDoc,
    path: '/commands/resend',
    summary: 'Send messages again',
    body: resendIdsParams,
    responses: done(resendResult),
  },
  retryNow: {
    ...commandDoc,
    path: '/commands/retry-now',
    summary: 'Attempt waiting messages now',
    description:
      'A message waiting for a later attempt (deferred after a temporary failure, or scheduled by `deferred_ts`) becomes due now and the dispatcher is woken; each one gets a `retry_now` event in its timeline. ' +
      'Answers `{"ok":true,"retried":[ids],"not_found":[ids],"not_applicable":[ids]}`: not applicable is a message that does not wait for a later attempt (sent, failed, in flight, already due, or held by a suspension).',
    body: retryNowParams,
    responses: done(retryNowResult),
    errors: ['NOT_FOUND'],
  },
  bulk: {
    ...commandDoc,
    path: '/commands/bulk',
    summary: 'Resend, delete, retry now, suspend or activate every message a filter finds',
    description:
      'The filter is the one of GET /messages (`status`, `account_id`, `batch_code`, `recipient`, `sender`, `from_ts`/`to_ts`, `priority`, `q`). A tenant key reaches its own tenant only; the admin token names a `tenant_id`, or says `all_tenants: true`. ' +
      'With `dry_run: true` nothing changes: `{"ok":true,"action","dry_run":true,"matching":n,"applicable":n,"sample":[{"tenant_id","id"}]}` (matching: what the filter finds; applicable: those the action applies to; up to 20 of them). ' +
      'The real run answers `{"ok":true,"action","dry_run":false,"matching","done","not_applicable","remaining"}`: it works in chunks of a few hundred messages, each chunk one transaction recorded like the per-id command (`command_log`, outbox events), and stops after `max` messages (`remaining`: still applicable afterwards). ' +
      'resend applies to sent, failed and bounced messages; delete to all but those in flight; retry-now to waiting messages not yet due. Suspension holds a tenant or one batch (not single messages): suspend and activate take only `tenant_id` and `batch_code` and act as POST /commands/suspend and /activate do.',
    body: bulkParams,
    responses: done(bulkResult),
    errors: ['NOT_FOUND', 'FORBIDDEN'],
  },
  erase: {
    ...commandDoc,
    path: '/commands/erase',
    summary: 'Erase personal data: messages by id, everything to or from an address, or a whole tenant',
    description:
      "Each body's data key is destroyed (its sealed copies, in backups and the WAL included, can no longer be opened) and every personal field is cleared: addresses, subject, Message-ID, diagnostic texts, the timeline's texts, bounce and PEC records; by address also its suppressions and the audit rows naming it. " +
      "The messages stay as tombstones: ids, status, times and codes, for the client's reports and accounting. A message still waiting is never sent: it ends in `error` (`erased`) and is reported as `erased`. " +
      'One transaction with its audit row (which does not name the address) and a `message.erased` event per message; answered once committed. ' +
      "In fleet mode every node erases what it holds (`nodes`, `missing_nodes`) and the cluster's replicated spool entries of the messages are overwritten at once; by address or of a whole tenant, the shared suppression entries in the fleet's bucket are removed too (`shared_suppressions`), or, when the bucket cannot be reached, 503 `FLEET_UNAVAILABLE`: ask for the same erasure again. " +
      'README "Personal data".',
    body: eraseParams,
    responses: done(eraseResult),
    errors: ['NOT_FOUND', 'FLEET_UNAVAILABLE'],
  },
  cleanup: {
    ...commandDoc,
    path: '/commands/cleanup-messages',
    summary: 'Remove messages whose outcome was reported longer ago than `older_than_seconds`',
    body: cleanupParams,
    responses: done(cleanupResult),
  },
  ...MESSAGE_READ_ROUTES,
} as const satisfies Record<string, RouteDoc>;

/** Command parameters may come as a JSON body, a query string, or both (the body wins). */
async function readParams<S extends z.ZodType>(c: Context<HttpEnv>, schema: S): Promise<z.output<S>> {
  const body = c.req.method === 'GET' ? {} : await readJson(c);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return validate(schema, body, 'parameters');
  return validate(schema, { ...c.req.query(), ...body }, 'parameters');
}

/** POST /add-messages and its /commands/ twin. */
function registerSubmission(app: Hono<HttpEnv>, deps: MessageRoutesDeps): void {
  const addMessages = async (c: Context<HttpEnv>) => {
    requireJson(c);
    const body = await requestBody(c);
    // Intake latency starts with the body in hand: a slow client's upload is not ours.
    const startedAt = performance.now();
    const principal = c.get('principal');
    const { items, defaultPriority } = await deps.parseSubmission(
      body,
      principal.kind === 'tenant' ? principal.tenantId : null,
    );
    const result = await deps.submissions.enqueue(c.get('principal'), items, defaultPriority, c.get('requestId'));
    deps.intake?.submitted('http', performance.now() - startedAt);
    return c.json({ ok: true, queued: result.queued, rejected: result.rejected.map(viewRejection) });
  };
  // The body is parsed by deps.parseSubmission (maybe in a worker thread) with the schemas the doc is built from.
  on(app, MESSAGE_ROUTES.addMessages, addMessages);
  on(app, MESSAGE_ROUTES.addMessagesCommand, addMessages);
}

/** POST /commands/erase's parameters as the erasure they ask for (the schema lets exactly one of the three through). */
function erasureRequestOf(p: z.output<typeof eraseParams>): ErasureRequest {
  if (p.ids !== undefined) return { by: 'messages', tenantId: p.tenant_id, ids: p.ids };
  if (p.address !== undefined) return { by: 'address', tenantId: p.tenant_id, address: p.address };
  return { by: 'tenant', tenantId: p.tenant_id };
}

/** The per-tenant and per-id operator commands (/commands/*). */
function registerCommands(app: Hono<HttpEnv>, deps: MessageRoutesDeps): void {
  const { commands } = deps;
  const routes = MESSAGE_ROUTES;
  /** A command route: parameters validated by its documented schema, its result answered with `ok: true`. */
  const command = <S extends z.ZodType>(
    doc: RouteDoc & { body: S },
    run: (ctx: CommandContext, params: z.output<S>) => object | Promise<object>,
  ): void => {
    on(app, doc, async (c) => c.json({ ok: true, ...(await run(commandContext(c), await readParams(c, doc.body))) }));
  };
  command(routes.runNow, (ctx, p) => commands.runNow(ctx, p.tenant_id));
  /**
   * In fleet mode the command goes to every node, which applies it to what it holds; `wire` is its
   * parameters as they travel (as validated, unless the command says otherwise).
   */
  const fleetCommand = <S extends z.ZodType>(
    doc: RouteDoc & { body: S },
    name: FleetCommandName,
    run: (ctx: CommandContext, params: z.output<S>) => object,
    wire: (params: z.output<S>) => Record<string, unknown> = (params) => params as Record<string, unknown>,
  ): void => {
    const fleet = deps.fleet;
    if (fleet === null || fleet === undefined) return command(doc, run);
    on(app, doc, async (c) =>
      c.json({ ok: true, ...(await fleet.command(commandContext(c), name, wire(await readParams(c, doc.body)))) }),
    );
  };
  // Suspensions are shared configuration: in fleet mode the bucket carries them to every node.
  command(routes.suspend, (ctx, p) => commands.suspend(ctx, p.tenant_id, p.batch_code));
  command(routes.activate, (ctx, p) => commands.activate(ctx, p.tenant_id, p.batch_code));
  fleetCommand(routes.deleteMessages, 'delete', (ctx, p) => commands.deleteMessages(ctx, p.tenant_id, p.ids));
  fleetCommand(routes.resend, 'resend', (ctx, p) => commands.resend(ctx, p.tenant_id, p.ids));
  fleetCommand(
    routes.erase,
    'erase',
    (ctx, p) => commands.erase(ctx, erasureRequestOf(p)),
    (p) => erasureParams(erasureRequestOf(p)),
  );
  command(routes.retryNow, (ctx, p) => commands.retryNow(ctx, p.tenant_id, idsOf(p.ids)));
  command(routes.cleanup, (ctx, p) => commands.cleanup(ctx, p.tenant_id, p.older_than_seconds));

  on(app, routes.bulk, async (c) => {
    const p = await readParams(c, routes.bulk.body);
    const request = {
      action: p.action,
      tenantId: p.tenant_id,
      allTenants: isSet(p.all_tenants),
      max: p.max ?? BULK_MAX,
      filter: filterFields(p),
    };
    const ctx = commandContext(c);
    return c.json({
      ok: true,
      ...(isSet(p.dry_run) ? viewBulkPreview(deps.bulk.preview(ctx, request)) : await deps.bulk.run(ctx, request)),
    });
  });
}

export function messageRoutes(deps: MessageRoutesDeps): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  registerSubmission(app, deps);
  registerCommands(app, deps);
  registerMessageReads(app, deps);
  return app;
}
