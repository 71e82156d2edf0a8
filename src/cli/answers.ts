/**
 * The API's answers as the CLI reads them, typed by the API's own zod view schemas
 * (`z.infer`). Imported as types only: zod and the API stay out of the CLI's run
 * time, --json prints the answer exactly as it came (a parse would drop the keys a
 * schema does not name), and the API's tests hold the schemas to the real answers.
 * Where a route has no view schema, or a schema leaves a part open, the shape the
 * CLI reads is written here.
 */
import type { z } from 'zod';
import type {
  accountAnswer,
  accountDeleted,
  accountList,
  accountUpserted,
  messageDetail,
  activateResult,
  bulkResult,
  messagePage,
  retryNowResult,
  eraseResult,
  suspendResult,
  statusAnswer,
  suppressionAdded,
  suppressionPage,
  issuedKey,
  tenantAnswer,
  tenantCreated,
  tenantList,
} from '../ingress/http/index.js';

export type TenantList = z.infer<typeof tenantList>;
export type TenantAnswer = z.infer<typeof tenantAnswer>;
export type TenantCreated = z.infer<typeof tenantCreated>;
export type IssuedKey = z.infer<typeof issuedKey>;

export type AccountList = z.infer<typeof accountList>;
export type AccountAnswer = z.infer<typeof accountAnswer>;
export type AccountView = AccountAnswer['account'];
export type AccountUpserted = z.infer<typeof accountUpserted>;
export type AccountDeleted = z.infer<typeof accountDeleted>;

export type MessagePage = z.infer<typeof messagePage>;
export type MessageDetail = z.infer<typeof messageDetail>;
export type RetryNowResult = z.infer<typeof retryNowResult>;
export type EraseResult = z.infer<typeof eraseResult>;
export type SuspendResult = z.infer<typeof suspendResult>;
export type ActivateResult = z.infer<typeof activateResult>;
export type BulkPreview = Extract<z.infer<typeof bulkResult>, { dry_run: true }>;
export type BulkRun = Extract<z.infer<typeof bulkResult>, { dry_run: false }>;

export type SuppressionPage = z.infer<typeof suppressionPage>;
export type SuppressionAdded = z.infer<typeof suppressionAdded>;

/** `{"ok": true}` and nothing the CLI reads. */
export interface OkAnswer {
  ok: true;
}

/** GET /status: the schema leaves the admin's health parts open records; these are the fields the CLI prints. */
export type StatusAnswer = Omit<
  z.infer<typeof statusAnswer>,
  'dispatcher' | 'reports' | 'mirror' | 'bounce' | 'fleet'
> & {
  dispatcher?: { running: boolean };
  reports?: { tenants: number; backlog: number; failing: string[] };
  mirror?: {
    enabled: boolean;
    state: string;
    backlog: number;
    last_error: string | null;
    last_error_ts: number | null;
  };
  bounce?: { mailbox: string; state: string }[];
  fleet?: { node_id: string; connected: boolean; nodes: { node_id: string; liveness: string }[]; missing: string[] };
};

/** GET /tenant/{id}/report-log (no view schema yet: views/report-log-view.ts). */
export interface ReportLog {
  report_log: {
    report_id: string;
    at_ts: number;
    ok: boolean;
    http_status: number | null;
    error_code: string | null;
    error: string | null;
    latency_ms: number;
    items: number;
  }[];
}

/** POST /account/{id}/test (no view schema yet: views/connection-test-view.ts). */
export interface ConnectionTest {
  ok: boolean;
  reason: string | null;
  tls: { version: string | null; cipher: string | null; certificate: string; certificate_error: string | null } | null;
  steps: { step: string; ok: boolean; text: string | null; duration_ms: number }[];
}

/** POST /account/{id}/resume (no view schema yet). */
export interface AccountResumed {
  ok: true;
  resumed: boolean;
}

/** POST and GET /fleet/drain (no view schema yet: routes/fleet-drain.ts). */
export interface DrainAnswer {
  drain: {
    phase: 'active' | 'draining' | 'drained';
    running: boolean;
    moved: Record<string, number>;
    waiting: number;
    last_error: string | null;
  };
}
