-- mailproxy: the one schema. Each `-- migration: N` block is applied once, in
-- order, in its own transaction, and PRAGMA user_version records the last one.
-- Blocks that have shipped are never edited; a change is a new block.
-- Instants are UTC epoch milliseconds (columns ending in _at); the API turns
-- them into the contract's epoch-second `_ts` fields.

-- migration: 1
CREATE TABLE tenants (
  id                     TEXT PRIMARY KEY,
  name                   TEXT,
  client_base_url        TEXT,
  client_sync_path       TEXT NOT NULL DEFAULT '/mail-proxy/sync',
  client_attachment_path TEXT,
  client_auth_sealed     TEXT,            -- AES-256-GCM sealed JSON, never plaintext
  active                 INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
  api_key_hash           TEXT NOT NULL UNIQUE,  -- HMAC-SHA256 of the key, never the key
  api_key_created_at     INTEGER NOT NULL,
  api_key_expires_at     INTEGER,
  created_at             INTEGER NOT NULL,
  updated_at             INTEGER NOT NULL
) STRICT;

CREATE TABLE accounts (
  tenant_id                   TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id                          TEXT NOT NULL,
  host                        TEXT NOT NULL,
  port                        INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
  user                        TEXT,
  password_sealed             TEXT,       -- AES-256-GCM sealed, never plaintext
  tls_mode                    TEXT NOT NULL CHECK (tls_mode IN ('implicit', 'starttls', 'none')),
  tls_reject_unauthorized     INTEGER NOT NULL DEFAULT 1 CHECK (tls_reject_unauthorized IN (0, 1)),
  limit_per_minute            INTEGER,
  limit_per_hour              INTEGER,
  limit_per_day               INTEGER,
  limit_behavior              TEXT NOT NULL DEFAULT 'defer' CHECK (limit_behavior IN ('defer', 'reject')),
  max_connections             INTEGER NOT NULL DEFAULT 5,
  max_messages_per_connection INTEGER NOT NULL DEFAULT 100,
  is_default                  INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
  -- Set when the relay refuses our AUTH or TLS: the account's mail waits until it is fixed.
  paused_at                   INTEGER,
  paused_reason               TEXT,
  created_at                  INTEGER NOT NULL,
  updated_at                  INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, id)
) STRICT;
-- At most one default account per tenant.
CREATE UNIQUE INDEX accounts_one_default ON accounts (tenant_id) WHERE is_default = 1;

-- The queue and the record of every message (seed 004 fields, in ms, plus what
-- the dispatcher needs). `pk` is the insertion sequence: FIFO within a priority.
CREATE TABLE messages (
  pk                   INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id            TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id                   TEXT NOT NULL,     -- the client's id: idempotency key per tenant
  account_id           TEXT NOT NULL,
  priority             INTEGER NOT NULL DEFAULT 2 CHECK (priority BETWEEN 0 AND 3),
  batch_code           TEXT,
  source               TEXT NOT NULL CHECK (source IN ('http', 'smtp')),
  payload              TEXT,              -- JSON of an HTTP submission
  raw                  BLOB,              -- RFC 5322 bytes of an SMTP submission
  mail_from            TEXT NOT NULL,
  rcpt_to              TEXT NOT NULL,     -- JSON array of envelope recipients
  subject              TEXT,
  message_id_header    TEXT,
  size_bytes           INTEGER NOT NULL DEFAULT 0,
  state                TEXT NOT NULL DEFAULT 'queued'
                       CHECK (state IN ('queued', 'deferred', 'sending', 'sent', 'error')),
  -- 1 while its batch or its tenant is suspended (or the tenant inactive): not dispatched.
  suspended            INTEGER NOT NULL DEFAULT 0 CHECK (suspended IN (0, 1)),
  attempts             INTEGER NOT NULL DEFAULT 0,
  next_attempt_at      INTEGER NOT NULL,
  lease_owner          TEXT,
  lease_expires_at     INTEGER,
  created_at           INTEGER NOT NULL,
  updated_at           INTEGER NOT NULL,
  deferred_at          INTEGER,           -- deferred_ts
  deferred_reason      TEXT,
  sent_at              INTEGER,           -- sent_ts
  error_at             INTEGER,           -- error_ts
  error                TEXT,
  last_reply_code      INTEGER,
  last_enhanced_status TEXT,
  refused_recipients   TEXT,              -- JSON: recipients the relay refused while accepting others
  reported_at          INTEGER,           -- reported_ts
  bounce_type          TEXT CHECK (bounce_type IN ('hard', 'soft')),
  bounce_code          TEXT,
  bounce_reason        TEXT,
  bounce_at            INTEGER,           -- bounce_ts
  bounce_reported_at   INTEGER,           -- bounce_reported_ts
  pec_rda_at           INTEGER,
  pec_rdc_at           INTEGER,
  pec_error            TEXT,
  pec_error_at         INTEGER,
  UNIQUE (tenant_id, id)
) STRICT;
-- The dispatcher's "next due of this account at this priority": only dispatchable
-- messages are indexed, so the claim is a range seek whatever the backlog.
CREATE INDEX messages_due ON messages (tenant_id, account_id, priority, next_attempt_at, pk)
  WHERE state IN ('queued', 'deferred') AND suspended = 0;
-- Suspension and activation touch one batch's waiting messages.
CREATE INDEX messages_batch ON messages (tenant_id, batch_code)
  WHERE state IN ('queued', 'deferred');
CREATE INDEX messages_tenant_recent ON messages (tenant_id, pk);
CREATE INDEX messages_account_state ON messages (tenant_id, account_id, state);
CREATE INDEX messages_reported ON messages (reported_at) WHERE reported_at IS NOT NULL;
CREATE INDEX messages_lease ON messages (lease_expires_at) WHERE state = 'sending';

-- The timeline of each message.
CREATE TABLE message_events (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,
  message_pk      INTEGER NOT NULL REFERENCES messages(pk) ON DELETE CASCADE,
  event_type      TEXT NOT NULL,
  occurred_at     INTEGER NOT NULL,
  attempt         INTEGER NOT NULL DEFAULT 0,
  reply_code      INTEGER,
  enhanced_status TEXT,
  text            TEXT,
  data            TEXT                    -- JSON
) STRICT;
CREATE INDEX message_events_message ON message_events (message_pk, seq);

-- Transactional outbox (seed 001 OutboxEvent) feeding the JetStream mirror.
-- `seq` gives the publish order; `id` is the event id and the Nats-Msg-Id.
CREATE TABLE outbox (
  seq              INTEGER PRIMARY KEY AUTOINCREMENT,
  id               TEXT NOT NULL UNIQUE,
  aggregate_type   TEXT NOT NULL,
  aggregate_id     TEXT NOT NULL,
  event_type       TEXT NOT NULL,
  event_version    INTEGER NOT NULL DEFAULT 1,
  tenant_id        TEXT NOT NULL,
  message_pk       INTEGER,
  message_id       TEXT,
  account_id       TEXT,
  batch_code       TEXT,
  attempt          INTEGER,
  payload          TEXT NOT NULL,         -- JSON `data`
  occurred_at      INTEGER NOT NULL,
  correlation_id   TEXT,
  causation_id     TEXT,
  published_at     INTEGER,
  publish_attempts INTEGER NOT NULL DEFAULT 0,
  publish_error    TEXT
) STRICT;
CREATE INDEX outbox_unpublished ON outbox (seq) WHERE published_at IS NULL;

-- Recipients a tenant must not send to (hard bounces, complaints, operator entries).
CREATE TABLE suppressions (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  address    TEXT NOT NULL,               -- lower-cased addr-spec
  reason     TEXT,
  source     TEXT NOT NULL CHECK (source IN ('manual', 'bounce', 'complaint')),
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  PRIMARY KEY (tenant_id, address)
) STRICT;

-- Messages counted against each account's limits in the current fixed window
-- of each kind; a row from an older window counts as zero.
CREATE TABLE account_usage (
  tenant_id    TEXT NOT NULL,
  account_id   TEXT NOT NULL,
  window_kind  TEXT NOT NULL CHECK (window_kind IN ('minute', 'hour', 'day')),
  window_start INTEGER NOT NULL,
  used         INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, account_id, window_kind),
  FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
) STRICT;

-- Suspended batches; batch_code '*' suspends the whole tenant.
CREATE TABLE suspensions (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  batch_code TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, batch_code)
) STRICT;

-- Audit of every admin write: who, what, on which tenant, with which (secret-free) parameters.
CREATE TABLE command_log (
  seq            INTEGER PRIMARY KEY AUTOINCREMENT,
  occurred_at    INTEGER NOT NULL,
  actor          TEXT NOT NULL,
  command        TEXT NOT NULL,
  tenant_id      TEXT,
  target         TEXT,
  params         TEXT NOT NULL,           -- JSON
  correlation_id TEXT
) STRICT;
CREATE INDEX command_log_tenant ON command_log (tenant_id, seq);

-- migration: 2
-- A leaner write path (bench/README.md): an intake wrote 11 B-tree entries per
-- message, the dispatcher rewrote a state index on every transition.
--   * Indexes that no query needed are gone; one partial index of pending
--     messages serves suspension, account and tenant checks. Queries use its
--     exact predicate, `state IN ('queued', 'deferred', 'sending')`, which is
--     what lets SQLite choose a partial index. Claiming keeps a row in it; only
--     the end of the handoff removes it.
--   * One row per transition: the outbox is also the message's timeline (it was
--     written twice, once per table). Its event id is unique by construction
--     (UUIDv7), so it is not indexed; the mirror publishes in `seq` order from a
--     cursor instead of marking rows.
DROP INDEX messages_tenant_recent;
DROP INDEX messages_account_state;
DROP INDEX messages_batch;
CREATE INDEX messages_pending ON messages (tenant_id, account_id, batch_code)
  WHERE state IN ('queued', 'deferred', 'sending');

CREATE TABLE events (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,  -- publish order; never reused
  id              TEXT NOT NULL,          -- event id and Nats-Msg-Id (UUIDv7)
  aggregate_type  TEXT NOT NULL,          -- 'message', 'tenant', 'account'
  aggregate_id    TEXT NOT NULL,
  event_type      TEXT NOT NULL,          -- 'message.sent', 'tenant.created', ...
  event_version   INTEGER NOT NULL DEFAULT 1,
  tenant_id       TEXT NOT NULL,
  message_pk      INTEGER,                -- outlives the message: its events are published after a delete
  message_id      TEXT,
  account_id      TEXT,
  batch_code      TEXT,
  attempt         INTEGER,
  reply_code      INTEGER,
  enhanced_status TEXT,
  text            TEXT,
  payload         TEXT,                   -- JSON `data`
  occurred_at     INTEGER NOT NULL,
  correlation_id  TEXT,
  causation_id    TEXT
) STRICT;
INSERT INTO events (id, aggregate_type, aggregate_id, event_type, event_version, tenant_id, message_pk, message_id,
    account_id, batch_code, attempt, reply_code, enhanced_status, text, payload, occurred_at, correlation_id, causation_id)
  SELECT id, aggregate_type, aggregate_id, event_type, event_version, tenant_id, message_pk, message_id,
    account_id, batch_code, attempt, json_extract(payload, '$.reply_code'), json_extract(payload, '$.enhanced_status'),
    json_extract(payload, '$.text'),
    CASE aggregate_type WHEN 'message' THEN json_remove(payload, '$.state', '$.reply_code', '$.enhanced_status', '$.text') ELSE payload END,
    occurred_at, correlation_id, causation_id
  FROM outbox ORDER BY seq;
-- Every timeline row was also an outbox row: nothing is lost.
DROP TABLE message_events;
DROP TABLE outbox;
ALTER TABLE events RENAME TO outbox;
CREATE INDEX outbox_message ON outbox (message_pk) WHERE message_pk IS NOT NULL;

-- migration: 3
-- SMTP submissions too large to hold in memory are written here while they
-- arrive (ingress/smtp), a part at a time, so a connection never holds more
-- than one part; the message row then names its spool instead of carrying
-- `raw`. A spool no message names is an abandoned transfer: the process
-- discards it, and the sweep at start removes what a crash left.
CREATE TABLE spools (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at INTEGER NOT NULL
) STRICT;
-- Rowid table, not WITHOUT ROWID: the rows are large blobs.
CREATE TABLE spool_parts (
  id       INTEGER PRIMARY KEY,
  spool_id INTEGER NOT NULL REFERENCES spools(id) ON DELETE CASCADE,
  seq      INTEGER NOT NULL,
  bytes    BLOB NOT NULL,
  UNIQUE (spool_id, seq)
) STRICT;
ALTER TABLE messages ADD COLUMN spool_id INTEGER REFERENCES spools(id);
CREATE INDEX messages_spool ON messages (spool_id) WHERE spool_id IS NOT NULL;
-- A message's spool goes with it: when retention deletes the message, or when a
-- resubmission replaces its content.
CREATE TRIGGER messages_spool_deleted AFTER DELETE ON messages
  WHEN OLD.spool_id IS NOT NULL
  BEGIN DELETE FROM spools WHERE id = OLD.spool_id; END;
CREATE TRIGGER messages_spool_replaced AFTER UPDATE OF spool_id ON messages
  WHEN OLD.spool_id IS NOT NULL AND OLD.spool_id IS NOT NEW.spool_id
  BEGIN DELETE FROM spools WHERE id = OLD.spool_id; END;

-- migration: 4
-- Delivery reports (sync/): each tenant's client application is told every
-- sent, error, deferred and bounced event, in outbox order. The report cursor
-- is the last outbox `seq` the client acknowledged; what lies past it is the
-- backlog. Outbox rows past a cursor are therefore not pruned.
--   * A tenant's reportable events, in order, by a range seek from its cursor.
--     Queries spell this exact predicate so that SQLite uses the index.
CREATE INDEX outbox_reportable ON outbox (tenant_id, seq)
  WHERE event_type IN ('message.sent', 'message.error', 'message.deferred', 'message.bounced');
--   * One row per tenant: its cursor and how the last rounds went, so that a
--     restart keeps backoff and do-not-disturb instead of hammering the client.
CREATE TABLE report_state (
  tenant_id       TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  cursor_seq      INTEGER NOT NULL,
  last_attempt_at INTEGER,
  last_success_at INTEGER,
  last_error      TEXT,
  last_error_at   INTEGER,
  failures        INTEGER NOT NULL DEFAULT 0,  -- consecutive failed rounds
  retry_at        INTEGER,                     -- backoff: no round before this
  dnd_until       INTEGER                      -- the client's next_sync_after
) STRICT;
-- Tenants of earlier versions were never reported to: they start from the beginning.
INSERT INTO report_state (tenant_id, cursor_seq) SELECT id, 0 FROM tenants;
--   * A secret per tenant to sign its reports (HMAC-SHA256), sealed like client_auth.
ALTER TABLE tenants ADD COLUMN client_signing_secret_sealed TEXT;

-- migration: 5
-- The JetStream mirror (outbox/): it publishes outbox rows in `seq` order and
-- moves its cursor past a row only after that row's PubAck (publishing again
-- after a crash is absorbed by the stream's duplicate window: the event id is
-- the Nats-Msg-Id). With the mirror off the cursor follows the head, so that
-- nothing waits for it.
CREATE TABLE mirror_state (
  id                INTEGER PRIMARY KEY CHECK (id = 1),
  cursor_seq        INTEGER NOT NULL,
  last_published_at INTEGER,
  last_error        TEXT,
  last_error_at     INTEGER
) STRICT;
INSERT INTO mirror_state (id, cursor_seq) VALUES (1, 0);
-- The outbox is also each message's timeline, so a message's rows go with the
-- message: at its deletion when they are published and reported, otherwise
-- once the mirror or the report loop has passed them (outbox/, store/report-store.ts).
CREATE TRIGGER messages_outbox_removed AFTER DELETE ON messages
  BEGIN
    DELETE FROM outbox WHERE message_pk = OLD.pk
      AND seq <= (SELECT cursor_seq FROM mirror_state WHERE id = 1)
      AND NOT (event_type IN ('message.sent', 'message.error', 'message.deferred', 'message.bounced')
        AND seq > coalesce((SELECT cursor_seq FROM report_state WHERE tenant_id = OLD.tenant_id), 9223372036854775807));
  END;
-- Admin events (no message) are pruned after `retention.outbox_retention_seconds`.
CREATE INDEX outbox_admin ON outbox (seq) WHERE message_pk IS NULL;

-- migration: 6
-- Commands that arrive over JetStream (outbox/command-consumer.ts), seed 001's
-- InboxMessage: a command's id (its Nats-Msg-Id, or its stream sequence) is
-- written in the transaction of its effect, so a redelivered command is
-- recognised and acknowledged without being applied twice.
CREATE TABLE inbox (
  id          TEXT PRIMARY KEY,
  subject     TEXT NOT NULL,
  tenant_id   TEXT NOT NULL,
  command     TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  outcome     TEXT NOT NULL               -- JSON: what the command did
) STRICT;
CREATE INDEX inbox_received ON inbox (received_at);

-- migration: 7
-- The bounce mailbox (bounce/). Each watched IMAP mailbox has a checkpoint:
-- its UIDVALIDITY and the last UID handled. A mailbox message's effect (bounce
-- fields, events, suppressions), its record below and the checkpoint are one
-- transaction; the message is moved or flagged in the mailbox only after it,
-- and `filed_at` notes that, so a crash in between files it again and never
-- applies it twice.
CREATE TABLE bounce_mailboxes (
  mailbox      TEXT PRIMARY KEY,
  uid_validity INTEGER NOT NULL,
  last_uid     INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
) STRICT;
CREATE TABLE bounce_messages (
  seq               INTEGER PRIMARY KEY AUTOINCREMENT,
  mailbox           TEXT NOT NULL,
  uid_validity      INTEGER NOT NULL,
  uid               INTEGER NOT NULL,
  received_at       INTEGER NOT NULL,
  header_message_id TEXT,
  from_header       TEXT,
  subject           TEXT,
  size_bytes        INTEGER NOT NULL,
  kind              TEXT NOT NULL,
  disposition       TEXT NOT NULL CHECK (disposition IN ('processed', 'unmatched', 'not_bounce')),
  unmatched_reason  TEXT,
  tenant_id         TEXT,
  message_pk        INTEGER,
  message_id        TEXT,
  matched_by        TEXT,
  mail_id           TEXT,
  original_message_id TEXT,
  findings          TEXT NOT NULL,        -- JSON: the parser's verdict per recipient
  filed_at          INTEGER,
  UNIQUE (mailbox, uid_validity, uid)
) STRICT;
CREATE INDEX bounce_messages_unfiled ON bounce_messages (mailbox, uid_validity, uid) WHERE filed_at IS NULL;
CREATE INDEX bounce_messages_unmatched ON bounce_messages (seq) WHERE disposition = 'unmatched';
CREATE INDEX bounce_messages_header ON bounce_messages (mailbox, header_message_id) WHERE header_message_id IS NOT NULL;
CREATE INDEX bounce_messages_tenant ON bounce_messages (tenant_id, seq) WHERE tenant_id IS NOT NULL;
-- Correlation by the returned original's Message-ID (X-Genro-Mail-ID is the
-- client id, found through the (tenant_id, id) key tenant by tenant).
CREATE INDEX messages_message_id_header ON messages (message_id_header) WHERE message_id_header IS NOT NULL;
-- A complaint (ARF) about a message: the provider's side, like a bounce.
ALTER TABLE messages ADD COLUMN complained_at INTEGER;
ALTER TABLE messages ADD COLUMN complaint_type TEXT;
-- Complaints are reported to the client too, and a message that expired has
-- an event of its own: the reportable index and the pruning trigger name the
-- new events (spelled as store/outbox-predicates.ts does).
DROP INDEX outbox_reportable;
CREATE INDEX outbox_reportable ON outbox (tenant_id, seq)
  WHERE event_type IN ('message.sent', 'message.error', 'message.expired', 'message.deferred', 'message.bounced', 'message.complained');
DROP TRIGGER messages_outbox_removed;
CREATE TRIGGER messages_outbox_removed AFTER DELETE ON messages
  BEGIN
    DELETE FROM outbox WHERE message_pk = OLD.pk
      AND seq <= (SELECT cursor_seq FROM mirror_state WHERE id = 1)
      AND NOT (event_type IN ('message.sent', 'message.error', 'message.expired', 'message.deferred', 'message.bounced', 'message.complained')
        AND seq > coalesce((SELECT cursor_seq FROM report_state WHERE tenant_id = OLD.tenant_id), 9223372036854775807));
  END;

-- migration: 8
-- Message search (GET /messages): full text over subject, sender and
-- recipients in an external-content FTS5 table (the text stays in `messages`).
-- Intake does not index: a trigger per message cost a third of the intake rate
-- (bench/README.md). An indexer (store/message-search.ts) adds new messages in
-- batches, a second or so behind, and `search_state` records how far it got,
-- in the transaction of each batch. Rows it has indexed leave the index with
-- their message, and a message replaced while waiting is indexed anew.
-- unicode61 splits addresses at @ and dots: `ann@example.net` is three tokens,
-- found as the phrase "ann example net".
CREATE VIRTUAL TABLE messages_fts USING fts5(subject, mail_from, rcpt_to, content = 'messages', content_rowid = 'pk', tokenize = 'unicode61 remove_diacritics 2');
CREATE TABLE search_state (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  indexed_pk INTEGER NOT NULL
) STRICT;
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
INSERT INTO search_state (id, indexed_pk) VALUES (1, coalesce((SELECT max(pk) FROM messages), 0));
CREATE TRIGGER messages_fts_removed AFTER DELETE ON messages
  WHEN OLD.pk <= (SELECT indexed_pk FROM search_state WHERE id = 1)
  BEGIN INSERT INTO messages_fts (messages_fts, rowid, subject, mail_from, rcpt_to) VALUES ('delete', OLD.pk, OLD.subject, OLD.mail_from, OLD.rcpt_to); END;
CREATE TRIGGER messages_fts_changed AFTER UPDATE OF subject, mail_from, rcpt_to ON messages
  WHEN OLD.pk <= (SELECT indexed_pk FROM search_state WHERE id = 1)
  BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, subject, mail_from, rcpt_to) VALUES ('delete', OLD.pk, OLD.subject, OLD.mail_from, OLD.rcpt_to);
    INSERT INTO messages_fts (rowid, subject, mail_from, rcpt_to) VALUES (NEW.pk, NEW.subject, NEW.mail_from, NEW.rcpt_to);
  END;

-- migration: 9
-- GET /messages?sort=next_attempt pages a tenant's waiting messages in the
-- order they fall due: a range walk of this index, where without it every page
-- sorted all of them (43 ms a page with 98,000 waiting, growing with the
-- queue). Suspended messages are in it (they wait too); messages_due is not
-- enough, as it leads with the account and the priority.
CREATE INDEX messages_waiting ON messages (tenant_id, next_attempt_at, pk)
  WHERE state IN ('queued', 'deferred');

-- migration: 10
-- GET /status, the console's overview and gmp_pending_messages count the waiting
-- messages by status and priority, which messages_pending did not hold: one
-- table lookup per waiting message, 170-250 ms at 100,000 on the event loop.
-- The same index with the state, the suspension and the priority after its
-- keys answers them alone (80 ms at 100,000). Intake writes the same number of
-- entries; a claim or a deferral now rewrites its entry (the state is in it).
-- Measured against counts kept by triggers (one write per intake and per
-- transition): those cost intake 15-25% (bench/README.md).
DROP INDEX messages_pending;
CREATE INDEX messages_pending ON messages (tenant_id, account_id, batch_code, state, suspended, priority)
  WHERE state IN ('queued', 'deferred', 'sending');

-- migration: 11
-- PEC (certified mail, Italy; core/pec.ts). An account marked is_pec relays
-- through a PEC provider, whose receipts arrive in the account's own IMAP
-- mailbox (the imap_* settings; the password sealed like the relay's, empty
-- ones falling back to the relay's user and password). The mailbox is watched
-- like a bounce mailbox: its checkpoint and the record of each message handled
-- are bounce_mailboxes and bounce_messages rows, named `pec:<tenant>/<account>`.
ALTER TABLE accounts ADD COLUMN is_pec INTEGER NOT NULL DEFAULT 0 CHECK (is_pec IN (0, 1));
ALTER TABLE accounts ADD COLUMN imap_host TEXT;
ALTER TABLE accounts ADD COLUMN imap_port INTEGER CHECK (imap_port BETWEEN 1 AND 65535);
ALTER TABLE accounts ADD COLUMN imap_tls_mode TEXT CHECK (imap_tls_mode IN ('implicit', 'starttls', 'none'));
ALTER TABLE accounts ADD COLUMN imap_user TEXT;
ALTER TABLE accounts ADD COLUMN imap_password_sealed TEXT;
ALTER TABLE accounts ADD COLUMN imap_folder TEXT;
-- A message sent through a PEC account waits for its acceptance receipt from
-- here (the sent instant) until the receipt, an error or the acceptance
-- timeout; only waiting messages are in the index the timeout sweep walks.
ALTER TABLE messages ADD COLUMN pec_awaiting_since INTEGER;
CREATE INDEX messages_pec_awaiting ON messages (pec_awaiting_since) WHERE pec_awaiting_since IS NOT NULL;
-- Every receipt, with its original bytes: it is the legal evidence, so it
-- outlives its message's retention and its account (a tenant's deletion takes
-- it). `complete` is 0 when the receipt was larger than the size limit and
-- `raw` holds its first bytes only. `message_pk` is null when no message of
-- ours fits it.
CREATE TABLE pec_receipts (
  seq                   INTEGER PRIMARY KEY AUTOINCREMENT,
  receipt_id            TEXT NOT NULL UNIQUE,
  tenant_id             TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  account_id            TEXT NOT NULL,
  mailbox               TEXT NOT NULL,
  uid_validity          INTEGER NOT NULL,
  uid                   INTEGER NOT NULL,
  received_at           INTEGER NOT NULL,
  receipt_type          TEXT NOT NULL,
  recognised_by         TEXT NOT NULL,
  message_pk            INTEGER,
  message_id            TEXT,
  matched_by            TEXT,
  recipient             TEXT,
  header_message_id     TEXT,
  referenced_message_id TEXT,
  mail_id               TEXT,
  identificativo        TEXT,
  error                 TEXT,
  error_detail          TEXT,
  issuer                TEXT,
  issued_at             INTEGER,
  subject               TEXT,
  size_bytes            INTEGER NOT NULL,
  complete              INTEGER NOT NULL CHECK (complete IN (0, 1)),
  sha256                TEXT NOT NULL,
  raw                   BLOB NOT NULL,
  UNIQUE (mailbox, uid_validity, uid)
) STRICT;
CREATE INDEX pec_receipts_message ON pec_receipts (message_pk, seq) WHERE message_pk IS NOT NULL;
CREATE INDEX pec_receipts_tenant ON pec_receipts (tenant_id, message_id, seq);
-- A receipt that names the gestore's identificativo rather than our Message-ID
-- is tied through the identificativo an earlier receipt of the message gave.
CREATE INDEX pec_receipts_identificativo ON pec_receipts (tenant_id, identificativo) WHERE identificativo IS NOT NULL AND message_pk IS NOT NULL;
-- PEC receipts are reported to the client (`message.pec`): the reportable
-- index and the pruning trigger name the new event (store/outbox-predicates.ts).
DROP INDEX outbox_reportable;
CREATE INDEX outbox_reportable ON outbox (tenant_id, seq)
  WHERE event_type IN ('message.sent', 'message.error', 'message.expired', 'message.deferred', 'message.bounced', 'message.complained', 'message.pec');
DROP TRIGGER messages_outbox_removed;
CREATE TRIGGER messages_outbox_removed AFTER DELETE ON messages
  BEGIN
    DELETE FROM outbox WHERE message_pk = OLD.pk
      AND seq <= (SELECT cursor_seq FROM mirror_state WHERE id = 1)
      AND NOT (event_type IN ('message.sent', 'message.error', 'message.expired', 'message.deferred', 'message.bounced', 'message.complained', 'message.pec')
        AND seq > coalesce((SELECT cursor_seq FROM report_state WHERE tenant_id = OLD.tenant_id), 9223372036854775807));
  END;

-- migration: 12
-- The default account is explicit (core/default-account.ts): a tenant's only
-- account no longer serves unmarked, so the only account of each tenant without
-- a default becomes its default, which it already was in effect. A tenant with
-- several accounts and none marked keeps none: its messages that name no account
-- were refused before and still are. (accounts_one_default, migration 1, keeps
-- it to one per tenant.)
UPDATE accounts SET is_default = 1
  WHERE tenant_id IN (SELECT tenant_id FROM accounts GROUP BY tenant_id HAVING count(*) = 1 AND max(is_default) = 0);

-- migration: 13
-- The last attempts of posting delivery reports to each tenant's client (GET /tenant/{id}/report-log):
-- kept here rather than in memory, so that operators still see them after a restart. Only the
-- newest 200 per tenant are kept: each insert prunes the tenant's older rows (store/report-log.ts).
CREATE TABLE report_attempts (
  id           INTEGER PRIMARY KEY,
  tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  report_id    TEXT NOT NULL,
  attempted_at INTEGER NOT NULL,
  ok           INTEGER NOT NULL CHECK (ok IN (0, 1)),
  http_status  INTEGER,
  error_code   TEXT,
  error        TEXT,
  latency_ms   INTEGER NOT NULL,
  items        INTEGER NOT NULL
) STRICT;
CREATE INDEX report_attempts_tenant ON report_attempts (tenant_id, id);

-- migration: 14
-- Fleet mode's shared configuration (issue 24): the bucket revision each node last
-- applied per configuration key (a restart resumes from here; an edit is a
-- compare-and-set on it), and the node that took each audited change.
CREATE TABLE config_revisions (
  key      TEXT PRIMARY KEY,
  revision INTEGER NOT NULL
) STRICT;
ALTER TABLE command_log ADD COLUMN node_id TEXT;

-- migration: 15
-- Fleet mode's claims on client ids (issue 24), as this node's index of the fleet's claim log
-- (core/claim-ledger.ts): who holds each key (a digest of tenant and client id), and the log
-- sequence applied last, written in one transaction with the rows it brought. Rows older than
-- the log's own retention are pruned. A single node writes nothing here.
CREATE TABLE fleet_claims (
  key  TEXT PRIMARY KEY,
  node TEXT NOT NULL,
  at   INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX fleet_claims_at ON fleet_claims (at);
CREATE TABLE fleet_claim_cursor (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  seq INTEGER NOT NULL
) STRICT;

-- migration: 16
-- The provider's side of a message, from the webhooks of the provider an account relays
-- through (issue 27): the id the provider gave the message in its 250 reply, its latest
-- state by seed 000's ranks, and each provider event applied once (a redelivered webhook
-- finds its own row and changes nothing). An account names its provider and, sealed, how
-- its webhooks are verified.
ALTER TABLE messages ADD COLUMN provider_message_id TEXT;
ALTER TABLE messages ADD COLUMN provider_state TEXT;
ALTER TABLE messages ADD COLUMN provider_state_at INTEGER;
CREATE INDEX messages_provider_message_id ON messages (provider_message_id) WHERE provider_message_id IS NOT NULL;
ALTER TABLE accounts ADD COLUMN provider TEXT CHECK (provider IN ('ses', 'sendgrid', 'mailgun', 'postmark'));
ALTER TABLE accounts ADD COLUMN provider_webhook_sealed TEXT;
CREATE TABLE provider_events (
  provider    TEXT NOT NULL,
  event_id    TEXT NOT NULL,
  tenant_id   TEXT NOT NULL,
  message_pk  INTEGER,
  kind        TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, provider, event_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX provider_events_received ON provider_events (received_at);

-- migration: 17
-- Personal data (issue 45): every body is sealed under a data key of its own
-- (security/body-seal.ts), kept here only wrapped by the key-encryption key that
-- `security.secret_key` derives. Destroying a key erases its body wherever the
-- sealed bytes live: this table, never copied in clear, is the one place to
-- delete from. `tenant_id`: the tenant whose body it seals (the parts bind it as associated data).
CREATE TABLE data_keys (
  id         INTEGER PRIMARY KEY,
  tenant_id  TEXT NOT NULL,
  wrapped    BLOB NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX data_keys_tenant ON data_keys (tenant_id);
-- A message's sealed body (either source: `source` says how to read it) and its
-- key; `payload` and `raw` are left to rows written before, which the sealer
-- (store/body-sealer.ts) seals in the background. A spooled body's parts are
-- sealed under its spool's key. `body_shredded_at`: the body's key was destroyed
-- (retention or erasure) and the message can no longer be sent; `erased_at`: its
-- personal fields are gone too (erasure), its status and times kept.
ALTER TABLE messages ADD COLUMN body BLOB;
ALTER TABLE messages ADD COLUMN key_id INTEGER;
ALTER TABLE messages ADD COLUMN body_shredded_at INTEGER;
ALTER TABLE messages ADD COLUMN erased_at INTEGER;
ALTER TABLE spools ADD COLUMN key_id INTEGER;
ALTER TABLE pec_receipts ADD COLUMN key_id INTEGER;
-- A key goes with what it seals: the message (deleted, or its content replaced),
-- the spool (deleted with its message or abandoned), the PEC receipt.
CREATE TRIGGER messages_key_deleted AFTER DELETE ON messages
  WHEN OLD.key_id IS NOT NULL
  BEGIN DELETE FROM data_keys WHERE id = OLD.key_id; END;
CREATE TRIGGER messages_key_replaced AFTER UPDATE OF key_id ON messages
  WHEN OLD.key_id IS NOT NULL AND OLD.key_id IS NOT NEW.key_id
  BEGIN DELETE FROM data_keys WHERE id = OLD.key_id; END;
CREATE TRIGGER spools_key_deleted AFTER DELETE ON spools
  WHEN OLD.key_id IS NOT NULL
  BEGIN DELETE FROM data_keys WHERE id = OLD.key_id; END;
CREATE TRIGGER pec_receipts_key_deleted AFTER DELETE ON pec_receipts
  WHEN OLD.key_id IS NOT NULL
  BEGIN DELETE FROM data_keys WHERE id = OLD.key_id; END;
-- Rows still in clear, for the background sealer to walk and count (`/status`).
CREATE INDEX messages_unsealed ON messages (pk) WHERE payload IS NOT NULL OR raw IS NOT NULL;
CREATE INDEX pec_receipts_unsealed ON pec_receipts (seq) WHERE key_id IS NULL AND length(raw) > 0;
-- A message erased while it waited is reported to its client (`message.erased`). The reportable
-- index and the pruning trigger name it, and the provider's `delivered` and `dropped` (issue 27),
-- which REPORTABLE_EVENTS gained without them: the queries spelled the longer list, so SQLite
-- could not use the index, and the trigger could prune those events before they were reported.
DROP INDEX outbox_reportable;
CREATE INDEX outbox_reportable ON outbox (tenant_id, seq)
  WHERE event_type IN ('message.sent', 'message.error', 'message.expired', 'message.deferred', 'message.bounced', 'message.complained', 'message.pec', 'message.delivered', 'message.dropped', 'message.erased');
DROP TRIGGER messages_outbox_removed;
CREATE TRIGGER messages_outbox_removed AFTER DELETE ON messages
  BEGIN
    DELETE FROM outbox WHERE message_pk = OLD.pk
      AND seq <= (SELECT cursor_seq FROM mirror_state WHERE id = 1)
      AND NOT (event_type IN ('message.sent', 'message.error', 'message.expired', 'message.deferred', 'message.bounced', 'message.complained', 'message.pec', 'message.delivered', 'message.dropped', 'message.erased')
        AND seq > coalesce((SELECT cursor_seq FROM report_state WHERE tenant_id = OLD.tenant_id), 9223372036854775807));
  END;
-- Body retention (store/body-retention.ts): the reported messages whose body is still kept, in the
-- order they were reported. An entry is written when an outcome is reported and goes when the body
-- is shredded: intake and delivery write nothing more.
CREATE INDEX messages_body_kept ON messages (reported_at) WHERE reported_at IS NOT NULL AND body_shredded_at IS NULL;

-- migration: 18
-- Keys a rotation of the master secret (`mailproxy keys rotate`) keeps, sealed under the
-- current master like any stored secret (store/kept-keys.ts). `token-digest`: the key the
-- tenants' API keys are digested with. It was derived from the master, and only the digests
-- are stored, so it cannot change without invalidating every tenant's key: the first
-- rotation keeps the old master's here. No row: the current master's own serves.
CREATE TABLE kept_keys (
  purpose    TEXT PRIMARY KEY,
  sealed     TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
-- Spools written before bodies were sealed (their parts in clear), for the background
-- sealer (store/body-sealer.ts) to walk and count, as messages_unsealed for messages.
CREATE INDEX spools_unsealed ON spools (id) WHERE key_id IS NULL;

-- migration: 19
-- A message's personal fields (issue 45): its envelope and subject are stored only
-- sealed (`personal`, the JSON [mail_from, rcpt_to, subject]) under a data key of
-- their own (`personal_key_id`): the body's key is shredded by body retention, these
-- live as long as the row, and an erasure destroys their key. `mail_from`, `rcpt_to`
-- and `subject` keep what rows written before hold, until the sealer
-- (store/body-sealer.ts) seals them, and are '' / '[]' / NULL otherwise.
-- `search_terms`: the blind-index digests (core/message/blind-search.ts) that search,
-- the sender and recipient filters and erasure by address match on.
ALTER TABLE messages ADD COLUMN personal BLOB;
ALTER TABLE messages ADD COLUMN personal_key_id INTEGER;
ALTER TABLE messages ADD COLUMN search_terms TEXT;
CREATE TRIGGER messages_personal_key_deleted AFTER DELETE ON messages
  WHEN OLD.personal_key_id IS NOT NULL
  BEGIN DELETE FROM data_keys WHERE id = OLD.personal_key_id; END;
CREATE TRIGGER messages_personal_key_replaced AFTER UPDATE OF personal_key_id ON messages
  WHEN OLD.personal_key_id IS NOT NULL AND OLD.personal_key_id IS NOT NEW.personal_key_id
  BEGIN DELETE FROM data_keys WHERE id = OLD.personal_key_id; END;
-- The full-text index of migration 8 indexed the clear words: it goes, and the index of
-- search terms takes its place, built from the start (search_state) as the indexer
-- reaches rows; rows the sealer has not reached yet have no terms and are found once it has.
DROP TRIGGER messages_fts_removed;
DROP TRIGGER messages_fts_changed;
DROP TABLE messages_fts;
CREATE VIRTUAL TABLE messages_terms USING fts5(search_terms, content = 'messages', content_rowid = 'pk', tokenize = 'ascii');
UPDATE search_state SET indexed_pk = 0 WHERE id = 1;
CREATE TRIGGER messages_terms_removed AFTER DELETE ON messages
  WHEN OLD.search_terms IS NOT NULL AND OLD.pk <= (SELECT indexed_pk FROM search_state WHERE id = 1)
  BEGIN INSERT INTO messages_terms (messages_terms, rowid, search_terms) VALUES ('delete', OLD.pk, OLD.search_terms); END;
CREATE TRIGGER messages_terms_changed AFTER UPDATE OF search_terms ON messages
  WHEN OLD.pk <= (SELECT indexed_pk FROM search_state WHERE id = 1)
  BEGIN
    INSERT INTO messages_terms (messages_terms, rowid, search_terms)
      SELECT 'delete', OLD.pk, OLD.search_terms WHERE OLD.search_terms IS NOT NULL;
    INSERT INTO messages_terms (rowid, search_terms) SELECT NEW.pk, NEW.search_terms WHERE NEW.search_terms IS NOT NULL;
  END;
-- Rows whose personal fields are still in clear, for the sealer to walk and count.
CREATE INDEX messages_personal_unsealed ON messages (pk) WHERE search_terms IS NULL AND erased_at IS NULL;

-- migration: 20
-- Personal data (issue 45): a suppression keeps its address only sealed (the secret box, bound
-- to the tenant and the digest) and is keyed and matched by the address's blind-index digest
-- (core/blind-index.ts), so the file holds no address in clear. SQL can neither digest nor seal:
-- the rows from before are kept aside in suppressions_clear, which the store converts and drops
-- in one transaction when it opens (store/suppression-conversion.ts).
ALTER TABLE suppressions RENAME TO suppressions_clear;
CREATE TABLE suppressions (
  tenant_id      TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  address_digest TEXT NOT NULL,
  address_sealed TEXT NOT NULL,
  reason         TEXT,
  source         TEXT NOT NULL CHECK (source IN ('manual', 'bounce', 'complaint')),
  created_at     INTEGER NOT NULL,
  expires_at     INTEGER,
  PRIMARY KEY (tenant_id, address_digest)
) STRICT;

-- migration: 21
-- Personal values outside bodies (store/record-fields.ts): a mailbox record's From,
-- subject and findings, and a PEC receipt's recipient, subject and error detail, are
-- kept in `personal_sealed`, sealed in the secret box under a context naming their row,
-- with the blind-index digests of the addresses they name for erasure to match on:
-- `address_digests` (a JSON array) and `recipient_digest`. The clear columns stay for
-- rows written before, which the background sealer (store/record-sealer.ts) seals; the
-- partial indexes list what it has yet to reach. Message-IDs stay in clear: correlation
-- needs them, and they name no one.
ALTER TABLE bounce_messages ADD COLUMN personal_sealed TEXT;
ALTER TABLE bounce_messages ADD COLUMN address_digests TEXT;
ALTER TABLE pec_receipts ADD COLUMN personal_sealed TEXT;
ALTER TABLE pec_receipts ADD COLUMN recipient_digest TEXT;
CREATE INDEX bounce_messages_clear ON bounce_messages (seq)
  WHERE personal_sealed IS NULL AND (from_header IS NOT NULL OR subject IS NOT NULL OR findings <> '[]');
CREATE INDEX pec_receipts_clear ON pec_receipts (seq)
  WHERE personal_sealed IS NULL AND (recipient IS NOT NULL OR subject IS NOT NULL OR error_detail IS NOT NULL);

-- migration: 22
-- Keys in the row, bodies beside it (issue 45). A message's data keys are kept wrapped in its
-- row (`body_key`, `personal_key`) instead of rows of data_keys: intake writes one row less per
-- key, and destroying one is part of the update that tombstones or shreds its message. Its sealed
-- body lives in `message_bodies`, keyed by the message's pk: message rows stay small (dozens to a
-- page instead of six), so an erasure of one message in ten rewrites a fifth of the pages. A body
-- whose key was destroyed is unreadable at once; its sealed bytes are listed in `shredded_bodies`
-- and removed by retention in small batches, never in the erasure's transaction. Spools and PEC
-- receipts keep their keys in data_keys. Rows written since migration 17 are converted here.
ALTER TABLE messages ADD COLUMN body_key BLOB;
ALTER TABLE messages ADD COLUMN personal_key BLOB;
CREATE TABLE message_bodies (
  pk   INTEGER PRIMARY KEY,
  body BLOB NOT NULL
) STRICT;
CREATE TABLE shredded_bodies (pk INTEGER PRIMARY KEY) STRICT;
UPDATE messages SET body_key = (SELECT wrapped FROM data_keys WHERE id = key_id) WHERE key_id IS NOT NULL;
UPDATE messages SET personal_key = (SELECT wrapped FROM data_keys WHERE id = personal_key_id)
  WHERE personal_key_id IS NOT NULL;
INSERT INTO message_bodies (pk, body) SELECT pk, body FROM messages WHERE body IS NOT NULL AND body_key IS NOT NULL;
DROP TRIGGER messages_key_deleted;
DROP TRIGGER messages_key_replaced;
DROP TRIGGER messages_personal_key_deleted;
DROP TRIGGER messages_personal_key_replaced;
DELETE FROM data_keys WHERE id IN (SELECT key_id FROM messages WHERE key_id IS NOT NULL)
  OR id IN (SELECT personal_key_id FROM messages WHERE personal_key_id IS NOT NULL);
ALTER TABLE messages DROP COLUMN body;
ALTER TABLE messages DROP COLUMN key_id;
ALTER TABLE messages DROP COLUMN personal_key_id;
-- A message deleted takes its body; one whose body key is destroyed lists its bytes for removal.
CREATE TRIGGER messages_body_removed AFTER DELETE ON messages
  BEGIN DELETE FROM message_bodies WHERE pk = OLD.pk; END;
CREATE TRIGGER messages_body_shredded AFTER UPDATE OF body_key ON messages
  WHEN OLD.body_key IS NOT NULL AND NEW.body_key IS NULL
  BEGIN INSERT OR IGNORE INTO shredded_bodies (pk) VALUES (OLD.pk); END;

-- migration: 23
-- An erasure answers once its transaction is durable; what SQLite keeps of the erased rows
-- elsewhere is scrubbed right after, by the search index's loop (store-service.ts): the erased
-- messages' search terms leave the full-text index (listed by this partial index, so a crash in
-- between loses none), then the index is merged and the WAL checkpointed and truncated while
-- `scrub_due`, set in the erasure's transaction, says one is owed.
CREATE INDEX messages_erased_terms ON messages (pk) WHERE erased_at IS NOT NULL AND search_terms IS NOT NULL;
ALTER TABLE search_state ADD COLUMN scrub_due INTEGER NOT NULL DEFAULT 0;

-- migration: 24
-- Search terms beside the message row (issue 45): a message's blind-index search terms (a third
-- of its row) live in `message_search_terms`, the full-text index's content table, so that an
-- erasure reads and rewrites smaller rows. An erasure lists its messages in `erased_search_terms`
-- and the scrub after it (migration 23) deletes their terms, which takes them out of the index.
-- The index is built again from the start (search_state) by the indexer, as after migration 19.
-- Rows whose envelope is still in clear from before migration 19 are those without `personal`.
CREATE TABLE message_search_terms (
  pk           INTEGER PRIMARY KEY,
  search_terms TEXT NOT NULL
) STRICT;
INSERT INTO message_search_terms (pk, search_terms) SELECT pk, search_terms FROM messages WHERE search_terms IS NOT NULL;
CREATE TABLE erased_search_terms (pk INTEGER PRIMARY KEY) STRICT;
INSERT INTO erased_search_terms (pk) SELECT pk FROM messages WHERE erased_at IS NOT NULL AND search_terms IS NOT NULL;
DROP TRIGGER messages_terms_removed;
DROP TRIGGER messages_terms_changed;
DROP INDEX messages_erased_terms;
DROP INDEX messages_personal_unsealed;
DROP TABLE messages_terms;
ALTER TABLE messages DROP COLUMN search_terms;
CREATE INDEX messages_personal_unsealed ON messages (pk) WHERE personal IS NULL AND erased_at IS NULL;
CREATE VIRTUAL TABLE messages_terms USING fts5(search_terms, content = 'message_search_terms', content_rowid = 'pk', tokenize = 'ascii');
UPDATE search_state SET indexed_pk = 0 WHERE id = 1;
-- The index follows its content below the indexer's mark; above it, the indexer adds what it finds.
CREATE TRIGGER message_search_terms_added AFTER INSERT ON message_search_terms
  WHEN NEW.pk <= (SELECT indexed_pk FROM search_state WHERE id = 1)
  BEGIN INSERT INTO messages_terms (rowid, search_terms) VALUES (NEW.pk, NEW.search_terms); END;
CREATE TRIGGER message_search_terms_removed AFTER DELETE ON message_search_terms
  WHEN OLD.pk <= (SELECT indexed_pk FROM search_state WHERE id = 1)
  BEGIN INSERT INTO messages_terms (messages_terms, rowid, search_terms) VALUES ('delete', OLD.pk, OLD.search_terms); END;
CREATE TRIGGER message_search_terms_changed AFTER UPDATE OF search_terms ON message_search_terms
  WHEN OLD.pk <= (SELECT indexed_pk FROM search_state WHERE id = 1)
  BEGIN
    INSERT INTO messages_terms (messages_terms, rowid, search_terms) VALUES ('delete', OLD.pk, OLD.search_terms);
    INSERT INTO messages_terms (rowid, search_terms) VALUES (NEW.pk, NEW.search_terms);
  END;
-- A message deleted takes its terms (and so its place in the index) with it.
CREATE TRIGGER messages_search_terms_removed AFTER DELETE ON messages
  BEGIN DELETE FROM message_search_terms WHERE pk = OLD.pk; DELETE FROM erased_search_terms WHERE pk = OLD.pk; END;

-- migration: 25
-- Failover between relays, warm-up and routing rules (issue 47): an account names fallback accounts of its tenant, in order,
-- that send its mail while it is paused, unreachable for `failover_after_seconds`, or over its
-- limits with limit_behavior `failover`. That behaviour is stored as `defer` (what it does when no
-- fallback may send) with `limit_failover` set: widening limit_behavior's CHECK would take
-- rebuilding the accounts table, which messages reference.
ALTER TABLE accounts ADD COLUMN fallback_accounts TEXT;
ALTER TABLE accounts ADD COLUMN failover_after_seconds INTEGER CHECK (failover_after_seconds > 0);
ALTER TABLE accounts ADD COLUMN limit_failover INTEGER NOT NULL DEFAULT 0 CHECK (limit_failover IN (0, 1));
-- A warm-up schedule (JSON: its start date and daily caps), applied like limit_per_day; null: none.
ALTER TABLE accounts ADD COLUMN warmup TEXT;
-- A tenant's routing rules (JSON, in order): which account a message that names none goes through.
ALTER TABLE tenants ADD COLUMN routes TEXT;

-- migration: 26
-- Per-destination limits (issue 47): an account's limits and connection caps per recipient domain
-- or group of domains (JSON, in order; null: none).
ALTER TABLE accounts ADD COLUMN destination_limits TEXT;
-- What a message keeps of its recipients for them: their domains (distinct, lower case,
-- comma-separated), never their addresses; kept with the message (a resend is held to its
-- destinations' limits too) and cleared by an erasure.
ALTER TABLE messages ADD COLUMN rcpt_domains TEXT;
-- The destination a message is held for (queued, its next attempt at the instant that
-- destination's budget returns; no attempt spent); cleared when it is claimed.
ALTER TABLE messages ADD COLUMN held_for TEXT;
-- Usage per account and destination, counted at claim like account_usage.
CREATE TABLE destination_usage (
  tenant_id    TEXT NOT NULL,
  account_id   TEXT NOT NULL,
  destination  TEXT NOT NULL,
  window_kind  TEXT NOT NULL CHECK (window_kind IN ('minute', 'hour', 'day')),
  window_start INTEGER NOT NULL,
  used         INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, account_id, destination, window_kind),
  FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
) STRICT;

-- migration: 27
-- A tenant's sending domains (issue 48): each domain its mail is DKIM-signed for, with its keys,
-- JSON sealed under the secret key as the client credentials are (its private keys inside).
ALTER TABLE tenants ADD COLUMN sending_domains_sealed TEXT;

-- migration: 28
-- One-click unsubscribe (issue 48): a tenant's setting (JSON: its public base URL, a mailto and
-- its scope; null: no List-Unsubscribe header is added), and a suppression's new source, what a
-- recipient asked for by the link. Widening the CHECK takes rebuilding the table (nothing references it).
ALTER TABLE tenants ADD COLUMN list_unsubscribe TEXT;
ALTER TABLE suppressions RENAME TO suppressions_before_unsubscribe;
CREATE TABLE suppressions (
  tenant_id      TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  address_digest TEXT NOT NULL,
  address_sealed TEXT NOT NULL,
  reason         TEXT,
  source         TEXT NOT NULL CHECK (source IN ('manual', 'bounce', 'complaint', 'unsubscribe')),
  created_at     INTEGER NOT NULL,
  expires_at     INTEGER,
  PRIMARY KEY (tenant_id, address_digest)
) STRICT;
INSERT INTO suppressions SELECT tenant_id, address_digest, address_sealed, reason, source, created_at, expires_at
  FROM suppressions_before_unsubscribe;
DROP TABLE suppressions_before_unsubscribe;

-- migration: 29
-- Large bodies in the body store (issue 46): a message whose sealed body was written to the data
-- directory's files or an S3 bucket names its object here instead of having a message_bodies row;
-- its key stays in body_key. An object whose message no longer needs it (shredded, erased,
-- replaced by a resubmission, or the message deleted) is listed for removal in the same
-- statement, and removed from the store by a loop that retries until the store answers: its key
-- is already gone, so a removal that waits never keeps a readable copy.
ALTER TABLE messages ADD COLUMN body_object TEXT;
CREATE TABLE object_removals (object TEXT PRIMARY KEY) STRICT;
-- What the sweep asks of each object it finds in the store: does a message name it?
CREATE INDEX messages_body_object ON messages (body_object) WHERE body_object IS NOT NULL;
CREATE TRIGGER messages_object_released AFTER UPDATE OF body_object ON messages
  WHEN OLD.body_object IS NOT NULL AND (NEW.body_object IS NULL OR NEW.body_object <> OLD.body_object)
  BEGIN INSERT OR IGNORE INTO object_removals (object) VALUES (OLD.body_object); END;
CREATE TRIGGER messages_object_deleted AFTER DELETE ON messages WHEN OLD.body_object IS NOT NULL
  BEGIN INSERT OR IGNORE INTO object_removals (object) VALUES (OLD.body_object); END;

-- migration: 30
-- Attachments offloaded to the body store (issue 46): a message relayed with a large attachment
-- replaced by a download link keeps one row per such file from the attempt the relay accepted.
-- `file_id` is what the link's token names (security/file-links.ts); the file is sealed under a
-- data key of its own (`file_key`, wrapped), so that it outlives the body's retention until its
-- link expires, and goes with the message's erasure. A file whose link expired or whose message
-- was erased keeps its row without key or object (a link followed then answers 410), and its
-- object is listed for removal in the same statement; the message's deletion takes the rows.
ALTER TABLE tenants ADD COLUMN attachment_offload TEXT;
CREATE TABLE message_files (
  file_id TEXT PRIMARY KEY,
  message_pk INTEGER NOT NULL,
  tenant_id TEXT NOT NULL,
  file_index INTEGER NOT NULL,
  object TEXT,
  file_key BLOB,
  size_bytes INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  downloads INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX message_files_message ON message_files (message_pk);
CREATE INDEX message_files_expiring ON message_files (expires_at) WHERE object IS NOT NULL;
CREATE INDEX message_files_object ON message_files (object) WHERE object IS NOT NULL;
CREATE TRIGGER message_files_released AFTER UPDATE OF object ON message_files
  WHEN OLD.object IS NOT NULL AND (NEW.object IS NULL OR NEW.object <> OLD.object)
  BEGIN INSERT OR IGNORE INTO object_removals (object) VALUES (OLD.object); END;
CREATE TRIGGER message_files_deleted AFTER DELETE ON message_files WHEN OLD.object IS NOT NULL
  BEGIN INSERT OR IGNORE INTO object_removals (object) VALUES (OLD.object); END;
CREATE TRIGGER messages_files_erased AFTER UPDATE OF erased_at ON messages
  WHEN NEW.erased_at IS NOT NULL AND OLD.erased_at IS NULL
  BEGIN UPDATE message_files SET object = NULL, file_key = NULL WHERE message_pk = NEW.pk AND object IS NOT NULL; END;
CREATE TRIGGER messages_files_deleted AFTER DELETE ON messages
  BEGIN DELETE FROM message_files WHERE message_pk = OLD.pk; END;
-- The reportable index and the pruning trigger name every REPORTABLE_EVENTS type again: the
-- one-click `unsubscribed` (whose queries then spelled a list the index did not, and which the
-- trigger could prune before it was reported) and this migration's `downloaded`.
DROP INDEX outbox_reportable;
CREATE INDEX outbox_reportable ON outbox (tenant_id, seq)
  WHERE event_type IN ('message.sent', 'message.error', 'message.expired', 'message.deferred', 'message.bounced', 'message.complained', 'message.pec', 'message.delivered', 'message.dropped', 'message.erased', 'message.unsubscribed', 'message.downloaded');
DROP TRIGGER messages_outbox_removed;
CREATE TRIGGER messages_outbox_removed AFTER DELETE ON messages
  BEGIN
    DELETE FROM outbox WHERE message_pk = OLD.pk
      AND seq <= (SELECT cursor_seq FROM mirror_state WHERE id = 1)
      AND NOT (event_type IN ('message.sent', 'message.error', 'message.expired', 'message.deferred', 'message.bounced', 'message.complained', 'message.pec', 'message.delivered', 'message.dropped', 'message.erased', 'message.unsubscribed', 'message.downloaded')
        AND seq > coalesce((SELECT cursor_seq FROM report_state WHERE tenant_id = OLD.tenant_id), 9223372036854775807));
  END;

-- migration: 31
-- A fleet whose nodes share an S3 body store (issue 46): a message handed to a peer (drained, or
-- surrendered to the survivor that adopted this node's spool) travels as its object's name, and the
-- peer reads the object from the bucket. Deleting the row here must not remove the object the peer
-- now needs: the hand-over notes it first, and the trigger lists only objects not handed over. The
-- sweep of unnamed objects keeps them too; it forgets a handed object once the bucket no longer
-- holds it (the peer removed it when it was done).
CREATE TABLE handed_objects (object TEXT PRIMARY KEY, handed_at INTEGER NOT NULL) STRICT;
DROP TRIGGER messages_object_deleted;
CREATE TRIGGER messages_object_deleted AFTER DELETE ON messages
  WHEN OLD.body_object IS NOT NULL AND NOT EXISTS (SELECT 1 FROM handed_objects WHERE object = OLD.body_object)
  BEGIN INSERT OR IGNORE INTO object_removals (object) VALUES (OLD.body_object); END;
