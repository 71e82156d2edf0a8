/**
 * The SQLite store: the only module that knows SQL. One connection is the single
 * writer; better-sqlite3 is synchronous, so a transaction never interleaves.
 */
import type { IdSource, AdminStore, SecretBox } from '../core/index.js';
import type { BlindIndex } from '../core/index.js';
import type { BodyObjects, BodySeal, ErasureStore, BodyObjectRows } from '../core/message/index.js';
import type { BounceLedger, BounceStore } from '../core/bounce/index.js';
import type { ProviderLedger } from '../core/provider/index.js';
import type { SuppressionRepository } from '../core/tenant/index.js';
import type {
  MessageAdmin,
  MessageSearch,
  MessageSelection,
  MessageHeaders,
  ThroughputStore,
  QueueStatusStore,
  MessageQueue,
  MessageSpool,
} from '../core/message/index.js';
import type { MirrorStore, InboxStore } from '../core/events/index.js';
import type { ConfigRows, ClaimIndex, SpoolRows, MessageTransferStore } from '../core/fleet/index.js';
import type { ReportStore } from '../core/report/index.js';
import { createSqliteAccountRepository } from './account-repository.js';
import { createSqliteBodySealer, type BodySealer } from './body-sealer.js';
import { BLIND_INDEX, readKeptKey, TOKEN_DIGEST, UNSUBSCRIBE_LINKS } from './kept-keys.js';
import { takeSnapshot, type DatabaseSnapshot } from './backup.js';
import { createSqliteChangeLog } from './change-log.js';
import { WRITER_CHECKPOINT_PAGES } from './checkpointer.js';
import { openDatabase, type SqliteDatabase } from './database.js';
import { createSqliteMessageAdmin } from './message-admin.js';
import { createSqliteMessageSearch } from './message-search.js';
import { createSqliteMessageSelection } from './message-selection.js';
import { createSqliteMessageHeaders } from './message-headers.js';
import { createMessageFiles, type MessageFiles } from './message-files.js';
import { createSqliteBodyObjectRows } from './body-object-rows.js';
import { createSqliteThroughput } from './throughput.js';
import { createSqliteQueueStatus } from './queue-status.js';
import { createSqliteMirrorStore } from './mirror-store.js';
import { createSqliteInboxStore } from './inbox-store.js';
import { createSqliteBounceLedger } from './bounce-ledger.js';
import { createSqliteProviderLedger, type ProviderLedgerDeps } from './provider-ledger.js';
import { createSqlitePecLedger, type PecLedger } from './pec-ledger.js';
import { createSqlitePecReceipts, type PecReceipts } from './pec-receipts.js';
import { createRecordFields, type RecordFields } from './record-fields.js';
import { createRecordSealing } from './record-sealer.js';
import { createMessageBounceWriter, createSqliteBounceStore } from './message-bounces.js';
import { createSqliteSuppressionRepository, createSuppressedLookup } from './suppression-repository.js';
import { sealClearSuppressions } from './suppression-conversion.js';
import { createMessageEventWriter, type MessageEventWriter, type OutboxListener } from './message-event-writer.js';
import { createBodySealing } from './message-enqueue.js';
import { createSqliteErasure } from './message-erasure.js';
import { createSqliteMessageQueue } from './message-queue.js';
import { createSqliteMessageTransfer } from './message-transfer.js';
import { createSqliteReportStore } from './report-store.js';
import { createSqliteSpool } from './spool.js';
import { createStoreCommits, type StoreCommits } from './store-commits.js';
import type { StoreWriteStatus } from './write-health.js';
import { createSqliteTenantRepository, type SqliteTenantRepository } from './tenant-repository.js';
import { createSqliteConfigRows, type ConfigRowsDeps } from './config-rows.js';
import { createSqliteClaimIndex } from './claim-index.js';
import { createSqliteSpoolRows } from './spool-rows.js';

export { checkDatabaseFile, removeAbandonedSnapshots, type DatabaseSnapshot } from './backup.js';
export { restoreDatabase, syncFile } from './restore.js';
export type { StoreWriteStatus } from './write-health.js';
export type { BodySealer } from './body-sealer.js';

export interface SqliteStore extends AdminStore {
  tenants: SqliteTenantRepository;
  queue: MessageQueue;
  spool: MessageSpool;
  messages: MessageAdmin;
  search: MessageSearch;
  /** What a bulk action reaches: the search filter, counted or paged. */
  selection: MessageSelection;
  queueStatus: QueueStatusStore;
  /** Outcomes per minute from the timeline (the console's chart). */
  throughput: ThroughputStore;
  /** A message's header section, for reading. */
  headers: MessageHeaders;
  reports: ReportStore;
  bounces: BounceStore;
  bounceLedger: BounceLedger;
  /** Provider webhooks' events: each applied once, with its effects. */
  providerLedger: ProviderLedger;
  /** PEC mailboxes: the receipts a batch brings, with their effects. */
  pecLedger: PecLedger;
  pecReceipts: PecReceipts;
  suppressions: SuppressionRepository;
  mirror: MirrorStore;
  inbox: InboxStore;
  /** A fleet drain's moves of waiting messages between nodes. */
  transfer: MessageTransferStore;
  /** Erasure of personal data: tombstones and shredded keys (message-erasure.ts). */
  erasure: ErasureStore;
  /** What the database knows of the body store's objects (body-object-rows.ts). */
  bodyObjectRows: BodyObjectRows;
  /** Offloaded attachments: found by their links, counted, expired (message-files.ts). */
  files: MessageFiles;
  /** Seals the bodies an earlier version stored in clear, a batch at a time (body-sealer.ts). */
  bodySealer: BodySealer;
  /** Keyed digests of addresses and words (core/blind-index.ts), with the key this database's digests were made with. */
  blindIndex: BlindIndex;
  /** The blind index key a key rotation kept (kept-keys.ts); null: none kept, the current master's serves. */
  keptBlindKey(): Buffer | null;
  /** The unsubscribe links' key a key rotation kept (kept-keys.ts); null: none kept, the current master's serves. */
  keptUnsubscribeKey(): Buffer | null;
  /** The key tenants' API keys are digested with, when a key rotation kept it (kept-keys.ts); null: none kept. */
  tokenDigestKey(): Buffer | null;
  /** Fleet mode's copy of the shared configuration, by bucket key (config-rows.ts): made when asked, so a single node prepares nothing. */
  configRows(deps: ConfigRowsDeps): ConfigRows;
  /** Fleet mode's index of the fleet's claims on client ids (claim-index.ts): made when asked, as configRows. */
  claimIndex(): ClaimIndex;
  /** Fleet mode's replicated spool: each waiting message as the cluster keeps it (spool-rows.ts), made when asked. */
  spoolRows(): SpoolRows;
  /** Calls `listener` for every outbox row written from now on (see OutboxListener). */
  onEvent(listener: OutboxListener): void;
  /** Schema versions applied while opening. */
  migrated: number[];
  /** Throws when the database cannot answer; used by readiness. */
  ping(): void;
  /** Whether writes are being refused (full, locked), the last refusal, and the size against the cap. */
  writeStatus(): StoreWriteStatus;
  /** A consistent copy of the database, taken while writes go on (backup.ts). */
  snapshot(): Promise<DatabaseSnapshot>;
  close(): void;
}

export interface SqliteStoreOptions {
  path: string;
  secrets: SecretBox;
  /** Seals message bodies under keys of their own (security/body-seal.ts). */
  bodies: BodySeal;
  /** The blind index, given the key the database keeps (kept-keys.ts; null: none, the current master's). */
  blindIndex(kept: Buffer | null): BlindIndex;
  ids: IdSource;
  /** Epoch milliseconds, for the time of the last refused write. */
  now: () => number;
  /** A checkpointer thread runs (checkpointer.ts): commits leave the WAL to it. */
  checkpointElsewhere?: boolean;
  /** See OpenDatabaseOptions.maxBytes. */
  maxBytes?: number;
  /** The body store that holds large bodies, read for a message's header section; none: no body is there. */
  objects?: Pick<BodyObjects, 'get'> | null;
}

export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const { db, migrated } = openDatabase({
    path: options.path,
    ...(options.checkpointElsewhere === true ? { walAutocheckpointPages: WRITER_CHECKPOINT_PAGES } : {}),
    ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
  });
  const ping = db.prepare('SELECT 1');
  const commits = createStoreCommits(db, options);
  const { guard } = commits;
  const listeners: OutboxListener[] = [];
  const notify: OutboxListener = (tenantId, eventType, accountId, text, messagePk) => {
    for (const listener of listeners) listener(tenantId, eventType, accountId, text, messagePk);
  };
  const writeEvent = createMessageEventWriter(db, options.ids, options.bodies, notify);
  const changes = createSqliteChangeLog(db, notify);
  const blindIndex = options.blindIndex(readKeptKey(db, options.secrets, BLIND_INDEX));
  // Before anything reads the list: the entries an earlier version kept in clear are sealed first.
  sealClearSuppressions(db, { secrets: options.secrets, index: blindIndex });
  const suppressions = createSqliteSuppressionRepository(db, { secrets: options.secrets, index: blindIndex });
  // Mailbox records' and PEC receipts' personal values, sealed with digests to match on.
  const personal = createRecordFields(options.secrets, blindIndex);
  let closed = false;
  return {
    blindIndex,
    migrated,
    tenants: createSqliteTenantRepository(db, options.secrets),
    accounts: createSqliteAccountRepository(db, options.secrets),
    changes,
    suppressions: guard(suppressions),
    ...createMessageParts(db, writeEvent, guard, options.bodies, {
      blindIndex,
      personal,
      objects: options.objects ?? null,
    }),
    ...createMailboxParts(
      db,
      { writeEvent, suppressions, changes, ids: options.ids, seal: options.bodies, commitGroup: commits.commitGroup },
      guard,
      personal,
    ),
    bodySealer: guard(createSqliteBodySealer(db, options.bodies, blindIndex, createRecordSealing(db, personal))),
    tokenDigestKey: () => readKeptKey(db, options.secrets, TOKEN_DIGEST),
    keptBlindKey: () => readKeptKey(db, options.secrets, BLIND_INDEX),
    keptUnsubscribeKey: () => readKeptKey(db, options.secrets, UNSUBSCRIBE_LINKS),
    mirror: guard(createSqliteMirrorStore(db)),
    inbox: guard(createSqliteInboxStore(db)),
    configRows: (deps) => createSqliteConfigRows(db, deps),
    claimIndex: () => guard(createSqliteClaimIndex(db)),
    spoolRows: () => guard(createSqliteSpoolRows(db, writeEvent)),
    onEvent: (listener) => {
      listeners.push(listener);
    },
    transaction: commits.transaction,
    commitGroup: commits.commitGroup,
    ping: () => {
      ping.get();
    },
    writeStatus: commits.writeStatus,
    snapshot: () => takeSnapshot(db, options.path),
    close: () => {
      if (closed) return;
      closed = true;
      commits.close();
      db.close();
    },
  };
}

type Guard = StoreCommits['guard'];

/** The queue and what reads and administers messages. */
function createMessageParts(
  db: SqliteDatabase,
  writeEvent: MessageEventWriter,
  guard: Guard,
  seal: BodySeal,
  {
    blindIndex,
    personal,
    objects,
  }: { blindIndex: BlindIndex; personal: RecordFields; objects: Pick<BodyObjects, 'get'> | null },
) {
  const pecReceipts = guard(createSqlitePecReceipts(db, writeEvent, seal, personal));
  const spool = createSqliteSpool(db, seal);
  return {
    queue: createSqliteMessageQueue(
      db,
      writeEvent,
      createBodySealing(db, seal, blindIndex, spool),
      createSuppressedLookup(db, blindIndex),
    ),
    spool: guard(spool),
    messages: createSqliteMessageAdmin(db, writeEvent, pecReceipts, seal),
    pecReceipts,
    search: guard(createSqliteMessageSearch(db, seal, blindIndex)),
    selection: guard(createSqliteMessageSelection(db, blindIndex)),
    queueStatus: guard(createSqliteQueueStatus(db)),
    throughput: guard(createSqliteThroughput(db)),
    headers: guard(createSqliteMessageHeaders(db, seal, objects)),
    reports: guard(createSqliteReportStore(db, writeEvent, seal)),
    transfer: guard(createSqliteMessageTransfer(db, writeEvent)),
    erasure: guard(createSqliteErasure(db, writeEvent, blindIndex)),
    bodyObjectRows: guard(createSqliteBodyObjectRows(db)),
    files: guard(createMessageFiles(db, writeEvent)),
  };
}

/** What the provider's side teaches: bounce and PEC mailboxes, provider webhooks. */
function createMailboxParts(
  db: SqliteDatabase,
  deps: Omit<ProviderLedgerDeps, 'bounces'>,
  guard: Guard,
  personal: RecordFields,
) {
  const { writeEvent, suppressions, changes, ids, seal } = deps;
  return {
    bounces: guard(createSqliteBounceStore(db, writeEvent)),
    bounceLedger: guard(
      createSqliteBounceLedger(db, {
        bounces: createMessageBounceWriter(db, writeEvent),
        suppressions,
        changes,
        ids,
        seal,
        personal,
      }),
    ),
    providerLedger: guard(
      createSqliteProviderLedger(db, { ...deps, bounces: createMessageBounceWriter(db, writeEvent) }),
    ),
    pecLedger: guard(createSqlitePecLedger(db, writeEvent, seal, personal)),
  };
}
