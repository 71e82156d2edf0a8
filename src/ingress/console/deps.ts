/** What the console is built from: the core services the JSON API uses, and its sessions. */
import type { AccountService } from '../../core/account/index.js';
import type { Authenticator, FailingDomain, SuppressionService, TenantService } from '../../core/tenant/index.js';
import type { MailboxStatus } from '../../core/bounce/index.js';
import type { Clock, IdSource, Logger } from '../../core/index.js';
import type { FleetMessages } from '../../core/fleet/index.js';
import type {
  BulkCommands,
  MessageCommands,
  MessageHeaders,
  MessageSearch,
  QueueStatusStore,
  ThroughputStore,
} from '../../core/message/index.js';
import type { MirrorStatus } from '../../core/events/index.js';
import type { PecReceiptReader } from '../../core/pec/index.js';
import type { ReportSync } from '../../core/report/index.js';
import type { SessionStore } from './session-store.js';

export interface ConsoleDeps {
  /** The API's authenticator: the same keys, and the same throttle of failed attempts. */
  authenticator: Authenticator;
  sessions: SessionStore;
  tenants: TenantService;
  accounts: AccountService;
  commands: MessageCommands;
  /** Actions over every message a filter finds (the list's bulk actions). */
  bulk: BulkCommands;
  search: MessageSearch;
  headers: MessageHeaders;
  queue: QueueStatusStore;
  throughput: ThroughputStore;
  suppressions: SuppressionService;
  reports: ReportSync;
  mirror: () => MirrorStatus;
  bounces: () => MailboxStatus[];
  /** The sending domains whose last DNS check failed (src/delivery/domain-watch.ts). */
  failingDomains: () => FailingDomain[];
  /** PEC receipts' original bytes, for the message page's downloads. */
  pecReceipts: PecReceiptReader;
  /** Fleet mode: the list and the message page reach every node; null or absent for a single node. */
  fleetMessages?: FleetMessages | null;
  clock: Clock;
  ids: IdSource;
  log: Logger;
}
