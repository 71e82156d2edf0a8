/**
 * Composition root: config -> key material -> store -> services -> HTTP.
 * The only module (with cli/) that wires rooms together. Stop runs in reverse.
 */
import { join } from 'node:path';
import { createAccountService } from './core/account-service.js';
import { createAuthenticator } from './core/authenticator.js';
import type { Clock, IdSource } from './core/clock.js';
import { createFailureThrottle } from './core/failure-throttle.js';
import type { Logger } from './core/logger.js';
import { createTenantService } from './core/tenant-service.js';
import { parseListenAddress, type Config } from './config/index.js';
import { createHttpApp, startHttpServer } from './ingress/http/index.js';
import { createAdminTokenVerifier, createHmacApiKeyIssuer } from './security/api-keys.js';
import { loadKeyMaterial } from './security/key-material.js';
import { createAesGcmSecretBox } from './security/secret-box.js';
import { createSqliteStore } from './store/index.js';

export const DATABASE_FILE = 'mailproxy.db';

export interface DaemonDeps {
  config: Readonly<Config>;
  log: Logger;
  clock: Clock;
  ids: IdSource;
}

export interface Daemon {
  http: { host: string; port: number };
  stop(deadlineMs: number): Promise<void>;
}

export async function startDaemon({ config, log, clock, ids }: DaemonDeps): Promise<Daemon> {
  const keys = loadKeyMaterial({ dataDir: config.data_dir, secretKey: config.security.secret_key, adminToken: config.http.admin_token });
  if (keys.created.secretKeyFile !== undefined) {
    log.warn({ path: keys.created.secretKeyFile }, 'secret key created: back it up, stored credentials cannot be read without it');
  }
  if (keys.created.adminTokenFile !== undefined) {
    log.warn({ path: keys.created.adminTokenFile }, 'admin token created: read it from this file and send it as Authorization: Bearer <token>');
  }

  const store = createSqliteStore({ path: join(config.data_dir, DATABASE_FILE), secrets: createAesGcmSecretBox(keys.encryptionKey) });
  if (store.migrated.length > 0) log.info({ versions: store.migrated }, 'database schema migrated');

  try {
    const apiKeys = createHmacApiKeyIssuer(keys.hashKey);
    const authenticator = createAuthenticator({
      admin: createAdminTokenVerifier(keys.adminToken, keys.hashKey),
      keys: apiKeys,
      tenants: store.tenants,
      throttle: createFailureThrottle({ maxFailures: config.http.auth_max_failures, windowMs: config.http.auth_failure_window_seconds * 1000 }),
      clock,
    });
    const app = createHttpApp({
      authenticator,
      tenants: createTenantService({ store, keys: apiKeys, clock, ids }),
      accounts: createAccountService({ store, clock, ids }),
      readiness: [{ name: 'store', check: () => (store.ping(), true) }],
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
      async stop(deadlineMs) {
        await http.close(deadlineMs);
        store.close();
      },
    };
  } catch (error) {
    store.close();
    throw error;
  }
}
