/**
 * Composition root: config -> key material -> store -> services -> dispatcher
 * -> HTTP. The only module (with cli/) that wires rooms together. Stop runs in
 * reverse: intake first, then in-flight sends, then the store.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createAccountService } from './core/account-service.js';
import { createAuthenticator } from './core/authenticator.js';
import type { Clock, IdSource } from './core/clock.js';
import type { Handoff, HandoffResult, RelayReply } from './core/relay.js';
import { createFailureThrottle } from './core/failure-throttle.js';
import type { Logger } from './core/logger.js';
import { createMessageCommands } from './core/message-commands.js';
import { createSubmissionService } from './core/submission-service.js';
import { createTenantService } from './core/tenant-service.js';
import { parseListenAddress, type Config } from './config/index.js';
import { createDispatcher, type Dispatcher } from './delivery/dispatcher.js';
import { chainHandoff, createComposer, createSender, type Composer, type ComposeJob, type ComposeOutcome, type HandoffSettings, type Sender } from './delivery/handoff.js';
import { createHttpApp, startHttpServer } from './ingress/http/index.js';
import { inlineSubmissionParser, unwrap, type ParseOutcome, type SubmissionParser } from './ingress/http/submission-parser.js';
import { createPeriodicLoop, type PeriodicLoop } from './runtime/index.js';
import { createWorkerPool, workerScript } from './runtime/worker-pool.js';
import type { RelayTask } from './workers/relay.js';
import type { CheckpointTask } from './workers/wal-checkpointer.js';
import { createAdminTokenVerifier, createHmacApiKeyIssuer } from './security/api-keys.js';
import { loadKeyMaterial } from './security/key-material.js';
import { createAesGcmSecretBox } from './security/secret-box.js';
import type { CheckpointResult } from './store/checkpointer.js';
import { createSqliteStore, type SqliteStore } from './store/index.js';

export const DATABASE_FILE = 'mailproxy.db';
/** How often the checkpointer thread moves committed WAL frames into the database file, and how often when the WAL is not growing. */
const CHECKPOINT_INTERVAL_MS = 100;
const IDLE_CHECKPOINT_INTERVAL_MS = 1000;

export interface DaemonDeps {
  config: Readonly<Config>;
  log: Logger;
  clock: Clock;
  ids: IdSource;
  /** Uniform [0, 1): retry jitter. */
  random?: () => number;
}

export interface Daemon {
  http: { host: string; port: number };
  store: SqliteStore;
  dispatcher: Dispatcher;
  retention: PeriodicLoop;
  stop(deadlineMs: number): Promise<void>;
}

/**
 * Checkpoints in a thread of its own (store/checkpointer.ts), every 100 ms while
 * the WAL grows and once a second while it does not: an idle appliance need not
 * wake ten times a second.
 */
function startCheckpointer(path: string, log: Logger): { stop(): Promise<void> } {
  const pool = createWorkerPool<CheckpointTask, CheckpointResult>({
    script: workerScript(import.meta.url, './workers/wal-checkpointer.js'),
    size: 1,
    name: 'wal-checkpointer',
    log,
    data: { path },
  });
  let lastFrames = -1;
  let quietUntil = 0;
  const loop = createPeriodicLoop({
    name: 'wal-checkpoint',
    intervalMs: CHECKPOINT_INTERVAL_MS,
    log,
    run: async () => {
      if (performance.now() < quietUntil) return;
      const { walFrames } = await pool.run('checkpoint');
      if (walFrames === lastFrames) quietUntil = performance.now() + IDLE_CHECKPOINT_INTERVAL_MS;
      lastFrames = walFrames;
    },
  });
  loop.start();
  return {
    async stop() {
      await loop.stop();
      await pool.close('close');
    },
  };
}

function openStore(config: Readonly<Config>, log: Logger, ids: IdSource): { store: SqliteStore; checkpointer: { stop(): Promise<void> }; adminToken: string; hashKey: Buffer } {
  const keys = loadKeyMaterial({ dataDir: config.data_dir, secretKey: config.security.secret_key, adminToken: config.http.admin_token });
  if (keys.created.secretKeyFile !== undefined) {
    log.warn({ path: keys.created.secretKeyFile }, 'secret key created: back it up, stored credentials cannot be read without it');
  }
  if (keys.created.adminTokenFile !== undefined) {
    log.warn({ path: keys.created.adminTokenFile }, 'admin token created: read it from this file and send it as Authorization: Bearer <token>');
  }
  const databasePath = join(config.data_dir, DATABASE_FILE);
  const store = createSqliteStore({ path: databasePath, secrets: createAesGcmSecretBox(keys.encryptionKey), ids, checkpointElsewhere: true });
  const checkpointer = startCheckpointer(databasePath, log.child({ component: 'store' }));
  if (store.migrated.length > 0) log.info({ versions: store.migrated }, 'database schema migrated');
  return { store, checkpointer, adminToken: keys.adminToken, hashKey: keys.hashKey };
}

function createHandoff(config: Readonly<Config>, log: Logger): Handoff {
  const { dispatch } = config;
  const settings: HandoffSettings = {
    sendTimeoutMs: dispatch.send_timeout_seconds * 1000,
    attachmentTimeoutMs: dispatch.attachment_timeout_seconds * 1000,
    attachmentMaxBytes: dispatch.attachment_max_bytes,
    allowPrivateAttachmentUrls: dispatch.allow_private_attachment_urls,
    hostname: hostname(),
  };
  if (dispatch.relay_threads === 0) {
    const composer = dispatch.compose_threads === 0 ? createComposer(settings) : threadedComposer(dispatch.compose_threads, settings, log);
    return chainHandoff(composer, createSender(settings, log.child({ component: 'relay' })));
  }
  const relays = createWorkerPool<RelayTask, RelayReply | HandoffResult | null>({
    script: workerScript(import.meta.url, './workers/relay.js'),
    size: dispatch.relay_threads,
    name: 'relay',
    log,
    data: { settings, logLevel: config.log.level },
  });
  const affinity = (account: { tenantId: string; id: string }): string => `${account.tenantId}/${account.id}`;
  if (dispatch.compose_threads === 0) {
    // No compose threads: each relay thread composes what it sends.
    return {
      deliver: async (job) => (await relays.run({ kind: 'deliver', job }, [], affinity(job.account))) as HandoffResult,
      close: () => relays.close({ kind: 'close' }),
    };
  }
  const sender: Sender = {
    send: async (job) => (await relays.run({ kind: 'send', job }, [], affinity(job.account))) as RelayReply,
    close: () => relays.close({ kind: 'close' }),
  };
  return chainHandoff(threadedComposer(dispatch.compose_threads, settings, log), sender);
}

function threadedComposer(threads: number, settings: HandoffSettings, log: Logger): Composer {
  const composers = createWorkerPool<ComposeJob, ComposeOutcome>({
    script: workerScript(import.meta.url, './workers/compose.js'),
    size: threads,
    name: 'compose',
    log,
    data: { settings },
  });
  return { compose: (job) => composers.run(job), close: () => composers.close() };
}

function createDelivery(config: Readonly<Config>, store: SqliteStore, deps: DaemonDeps) {
  const { dispatch } = config;
  const handoff = createHandoff(config, deps.log);
  const dispatcher = createDispatcher({
    queue: store.queue,
    accounts: store.accounts,
    tenants: store.tenants,
    handoff,
    clock: deps.clock,
    log: deps.log.child({ component: 'dispatcher' }),
    random: deps.random ?? Math.random,
    owner: deps.ids.uuid(),
    config: {
      leaseMs: dispatch.lease_seconds * 1000,
      claimBatch: dispatch.claim_batch,
      retry: { scheduleMs: dispatch.retry_schedule_seconds.map((seconds) => seconds * 1000), jitter: dispatch.retry_jitter, maxAgeMs: dispatch.max_age_seconds * 1000 },
    },
  });
  return { handoff, dispatcher };
}

export async function startDaemon(deps: DaemonDeps): Promise<Daemon> {
  const { config, log, clock, ids } = deps;
  const { store, checkpointer, adminToken, hashKey } = openStore(config, log, ids);
  const { handoff, dispatcher } = createDelivery(config, store, deps);
  const retention = createPeriodicLoop({
    name: 'retention',
    intervalMs: config.retention.interval_seconds * 1000,
    log,
    run: () => {
      const removed = store.messages.removeReported(null, clock.now() - config.retention.report_retention_seconds * 1000);
      if (removed > 0) log.info({ removed }, 'retention removed reported messages');
    },
  });

  const parserLimits = { maxBatchMessages: config.http.max_batch_messages, maxMessageBytes: config.http.max_message_bytes, maxRecipients: config.http.max_recipients };
  const parserPool = config.http.parse_threads === 0
    ? null
    : createWorkerPool<ArrayBuffer, ParseOutcome>({
        script: workerScript(import.meta.url, './workers/submission-parser.js'),
        size: config.http.parse_threads,
        name: 'submission-parser',
        log,
        data: parserLimits,
      });
  // The body's bytes move to the worker (transferred, not copied).
  const parseSubmission: SubmissionParser = parserPool === null
    ? inlineSubmissionParser(parserLimits)
    : async (body) => unwrap(await parserPool.run(body, [body]));

  try {
    dispatcher.start();
    retention.start();
    const apiKeys = createHmacApiKeyIssuer(hashKey);
    const app = createHttpApp({
      authenticator: createAuthenticator({
        admin: createAdminTokenVerifier(adminToken, hashKey),
        keys: apiKeys,
        tenants: store.tenants,
        throttle: createFailureThrottle({ maxFailures: config.http.auth_max_failures, windowMs: config.http.auth_failure_window_seconds * 1000 }),
        clock,
      }),
      tenants: createTenantService({ store, holds: store.messages, keys: apiKeys, clock, ids }),
      accounts: createAccountService({ store, clock, ids }),
      submissions: createSubmissionService({ store, queue: store.queue, clock, ids, wake: () => dispatcher.wake(), defer: setImmediate }),
      commands: createMessageCommands({ store, messages: store.messages, clock, ids, wake: () => dispatcher.wake() }),
      parseSubmission,
      readiness: [
        { name: 'store', check: () => (store.ping(), true) },
        { name: 'dispatcher', check: () => dispatcher.isRunning() },
        // Intake needs its parser threads; a relay thread being replaced only delays delivery.
        ...(parserPool === null ? [] : [{ name: 'parser', check: () => parserPool.ready() }]),
      ],
      log: log.child({ component: 'http' }),
      ids,
      maxBodyBytes: config.http.max_body_bytes,
    });
    const listen = parseListenAddress(config.http.listen);
    if (listen === null) throw new Error('http.listen was validated but does not parse');
    const http = await startHttpServer(app, listen);
    log.info({ host: http.address.host, port: http.address.port }, 'http listening');

    return {
      http: http.address,
      store,
      dispatcher,
      retention,
      async stop(deadlineMs) {
        const deadline = Date.now() + deadlineMs;
        const left = (): number => Math.max(0, deadline - Date.now());
        await http.close(left());
        await retention.stop();
        await dispatcher.stop(left());
        await handoff.close();
        await parserPool?.close();
        await checkpointer.stop();
        store.close();
      },
    };
  } catch (error) {
    await dispatcher.stop(0);
    await handoff.close();
    await parserPool?.close();
    await checkpointer.stop();
    store.close();
    throw error;
  }
}
