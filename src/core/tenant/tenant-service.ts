/**
 * Tenant administration use-cases: create, read, update, delete, rotate the
 * API key. Every write is audited and mirrored in the same transaction.
 */
import { AppError, notFound } from '../app-error.js';
import { changeRecorder, type ChangeRecord } from '../events/change-record.js';
import type { Clock, IdSource } from '../clock.js';
import type { ConfigWrites } from '../fleet/config-replica.js';
import type { MessageAdmin } from '../message/admin.js';
import type { AdminStore, ApiKeyIssuer } from '../ports.js';
import { requireAdmin, type Principal } from './principal.js';
import { viewTenant } from '../contracts/tenant.js';
import { checkListUnsubscribe, type ListUnsubscribe } from './list-unsubscribe.js';
import {
  checkRoutes,
  explainRoute,
  type RouteExplanation,
  type RouteSample,
  type RoutingRule,
} from '../account/routing.js';
import { DEFAULT_CLIENT_SYNC_PATH, type ClientAuth, type Tenant } from './tenant.js';
import type { AttachmentOffload } from '../message/attachment-offload.js';

export interface TenantFields {
  name?: string | null | undefined;
  clientBaseUrl?: string | null | undefined;
  clientSyncPath?: string | undefined;
  clientAttachmentPath?: string | null | undefined;
  clientAuth?: ClientAuth | null | undefined;
  /** Null stops signing reports. */
  clientSigningSecret?: string | null | undefined;
  active?: boolean | undefined;
  /** The tenant's routing rules, whole; `undefined` keeps them. */
  routes?: RoutingRule[] | undefined;
  /** One-click unsubscribe links in its mail; null: none; `undefined` keeps the setting. */
  listUnsubscribe?: ListUnsubscribe | null | undefined;
  /** Large attachments as download links; null: never; `undefined` keeps the setting. */
  attachmentOffload?: AttachmentOffload | null | undefined;
}

export interface TenantCreateInput extends TenantFields {
  id: string;
  apiKeyExpiresInSeconds?: number | undefined;
}

export interface CommandContext {
  principal: Principal;
  correlationId: string | null;
  /**
   * The channel the command came through when it is not the API (`console`), or `daemon` for what
   * the daemon does by itself (its daily domain checks), or `unsubscribe` for a recipient's one-click
   * link: recorded with the actor.
   */
  via?: 'console' | 'daemon' | 'unsubscribe';
}

/** A new API key, shown once: only its digest is kept. */
export interface IssuedKey {
  tenantId: string;
  apiKey: string;
  expiresAt: number | null;
}

export interface TenantServiceDeps {
  store: AdminStore;
  /** Re-derives which waiting messages are held when `active` changes. */
  holds: Pick<MessageAdmin, 'refreshHolds'>;
  keys: ApiKeyIssuer;
  /** A new random secret to sign a tenant's reports. */
  newSigningSecret: () => string;
  clock: Clock;
  ids: IdSource;
}

export function createTenantService(deps: TenantServiceDeps) {
  const { store, keys, clock } = deps;

  const load = tenantLoader(store);
  const change = tenantChange(deps);

  return {
    /** `signingSecret` is set only when it was generated here: shown once, like the key. */
    create(
      ctx: CommandContext,
      input: TenantCreateInput,
    ): { tenant: Tenant; key: IssuedKey; signingSecret: string | null } {
      requireAdmin(ctx.principal);
      const now = clock.now();
      const issued = keys.issue();
      const generated = input.clientSigningSecret === undefined ? deps.newSigningSecret() : null;
      const tenant = newTenant(input, generated, now);
      // A new tenant has no account yet: its rules come once its accounts do.
      checkRoutes(tenant.routes, []);
      checkListUnsubscribe(tenant.listUnsubscribe);
      store.transaction(() => {
        if (store.tenants.get(tenant.id) !== null) {
          throw new AppError('CONFLICT', 'tenant already exists', { details: { tenant_id: tenant.id } });
        }
        store.tenants.insert(tenant, issued.hash);
        store.changes.record(change(ctx, 'tenant.create', 'tenant.created', tenant.id, { tenant: viewTenant(tenant) }));
      });
      return {
        tenant,
        key: { tenantId: tenant.id, apiKey: issued.key, expiresAt: tenant.apiKeyExpiresAt },
        signingSecret: generated,
      };
    },

    ...readCommands(store, load),

    update(ctx: CommandContext, id: string, fields: TenantFields): Tenant {
      requireAdmin(ctx.principal);
      return store.transaction(() => {
        const current = load(id);
        const next: Tenant = { ...current, ...definedOnly(fields), updatedAt: clock.now() };
        if (fields.routes !== undefined) checkRoutes(fields.routes, store.accounts.choices(id));
        checkListUnsubscribe(fields.listUnsubscribe);
        store.tenants.update(next);
        if (next.active !== current.active) deps.holds.refreshHolds(id, next.updatedAt);
        store.changes.record(
          change(ctx, 'tenant.update', 'tenant.updated', id, {
            tenant: viewTenant(next),
            changed: Object.keys(definedOnly(fields)),
          }),
        );
        return next;
      });
    },

    delete(ctx: CommandContext, id: string, options: { force: boolean }): void {
      requireAdmin(ctx.principal);
      store.transaction(() => {
        load(id);
        const pending = pendingUnlessForced(store, id, options.force);
        store.tenants.delete(id);
        store.changes.record(
          change(ctx, 'tenant.delete', 'tenant.deleted', id, {
            tenant_id: id,
            forced: options.force,
            pending_messages: pending,
          }),
        );
      });
    },

    ...credentialCommands(deps, load, change),
  };
}

/** The writes shared across a fleet (config-replica.ts): they may wait for it. */
export const SHARED_TENANT_WRITES = ['create', 'update', 'delete', 'rotateSigningSecret', 'rotateKey'] as const;
export type TenantService = ConfigWrites<ReturnType<typeof createTenantService>, (typeof SHARED_TENANT_WRITES)[number]>;

type TenantChange = (
  ctx: CommandContext,
  command: string,
  eventType: string,
  tenantId: string,
  data: Record<string, unknown>,
) => ChangeRecord;

/** The audit record of a change to a tenant. */
export function tenantChange({ clock, ids }: Pick<TenantServiceDeps, 'clock' | 'ids'>): TenantChange {
  return (ctx, command, eventType, tenantId, data) =>
    changeRecorder(ctx, { now: () => clock.now(), uuid: () => ids.uuid() })({
      command,
      eventType,
      tenantId,
      aggregateType: 'tenant',
      aggregateId: tenantId,
      data,
    });
}

function tenantLoader(store: AdminStore): (id: string) => Tenant {
  return (id) => {
    const tenant = store.tenants.get(id);
    if (tenant === null) throw notFound('tenant', id);
    return tenant;
  };
}

const expiry = (now: number, seconds: number | undefined): number | null =>
  seconds === undefined ? null : now + seconds * 1000;

/** A tenant as created: what the input leaves out takes its default. */
function newTenant(input: TenantCreateInput, generatedSecret: string | null, now: number): Tenant {
  return {
    id: input.id,
    name: input.name ?? null,
    clientBaseUrl: input.clientBaseUrl ?? null,
    clientSyncPath: input.clientSyncPath ?? DEFAULT_CLIENT_SYNC_PATH,
    clientAttachmentPath: input.clientAttachmentPath ?? null,
    clientAuth: input.clientAuth ?? null,
    clientSigningSecret: generatedSecret ?? input.clientSigningSecret ?? null,
    active: input.active ?? true,
    routes: input.routes ?? [],
    sendingDomains: [],
    listUnsubscribe: input.listUnsubscribe ?? null,
    attachmentOffload: input.attachmentOffload ?? null,
    apiKeyCreatedAt: now,
    apiKeyExpiresAt: expiry(now, input.apiKeyExpiresInSeconds),
    createdAt: now,
    updatedAt: now,
  };
}

/** How many messages a deleted tenant takes with it: refused, unless forced, while any still wait. */
function pendingUnlessForced(store: AdminStore, id: string, force: boolean): number {
  const pending = store.tenants.countPendingMessages(id);
  if (pending > 0 && !force) {
    throw new AppError('CONFLICT', 'tenant has messages not yet delivered; pass force=true to delete them too', {
      details: { tenant_id: id, pending_messages: pending },
    });
  }
  return pending;
}

/** The admin's reads of tenants. */
function readCommands(store: AdminStore, load: (id: string) => Tenant) {
  return {
    list(ctx: CommandContext): Tenant[] {
      requireAdmin(ctx.principal);
      return store.tenants.list();
    },

    /** Where a message of the tenant would go, and why (its routing rules, its default account). */
    testRoute(ctx: CommandContext, id: string, sample: RouteSample): RouteExplanation {
      requireAdmin(ctx.principal);
      return explainRoute(load(id).routes, sample, store.accounts.choices(id));
    },

    get(ctx: CommandContext, id: string): Tenant {
      requireAdmin(ctx.principal);
      return load(id);
    },
  };
}

/** The tenant's credentials: its report-signing secret and its API key, each new one answered once. */
function credentialCommands(deps: TenantServiceDeps, load: (id: string) => Tenant, change: TenantChange) {
  const { store, keys, clock } = deps;
  return {
    /** A new report-signing secret, answered once; the old one stops signing at once. */
    rotateSigningSecret(ctx: CommandContext, id: string): { tenantId: string; secret: string } {
      requireAdmin(ctx.principal);
      const secret = deps.newSigningSecret();
      store.transaction(() => {
        store.tenants.update({ ...load(id), clientSigningSecret: secret, updatedAt: clock.now() });
        store.changes.record(
          change(ctx, 'tenant.rotate_signing_secret', 'tenant.signing_secret_rotated', id, { tenant_id: id }),
        );
      });
      return { tenantId: id, secret };
    },

    rotateKey(ctx: CommandContext, id: string, options: { expiresInSeconds?: number | undefined }): IssuedKey {
      requireAdmin(ctx.principal);
      const issued = keys.issue();
      const now = clock.now();
      const expiresAt = expiry(now, options.expiresInSeconds);
      store.transaction(() => {
        load(id);
        store.tenants.replaceApiKey(id, issued.hash, now, expiresAt);
        store.changes.record(
          change(ctx, 'tenant.rotate_key', 'tenant.api_key_rotated', id, {
            tenant_id: id,
            api_key_expires_at: expiresAt === null ? null : new Date(expiresAt).toISOString(),
          }),
        );
      });
      return { tenantId: id, apiKey: issued.key, expiresAt };
    },
  };
}

/** Drops keys whose value is `undefined` so a partial update never erases a field by omission. */
export function definedOnly<T extends object>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
