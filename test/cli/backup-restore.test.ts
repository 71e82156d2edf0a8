import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { closedPort, runCli } from '../helpers/cli-process.js';
import { serveUntilListening } from '../helpers/daemon-process.js';
import { tearDownProcesses } from '../helpers/process-teardown.js';
import { api } from '../helpers/test-daemon.js';

const started = tearDownProcesses();

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-cli-backup-'));
  started.dirs.push(dir);
  return dir;
}

const PER_REQUEST = 20;
const BODY = 'x'.repeat(4000);

/** One request's messages: ids `<prefix>-<n>`, committed together or not at all. */
const batch = (prefix: string, count = PER_REQUEST) => ({
  messages: Array.from({ length: count }, (_, n) => ({
    id: `${prefix}-${n}`,
    tenant_id: 'acme',
    from: 'app@example.com',
    to: `user${n}@example.org`,
    subject: `load ${prefix}`,
    body: BODY,
  })),
});

/**
 * Posts /add-messages from `lanes` concurrent clients until stopped, counting
 * the messages acknowledged (each answer comes after its commit).
 */
function writeLoad(url: string, token: string, lanes: number) {
  let acked = 0;
  let requests = 0;
  let stopping = false;
  const lane = async (lane: number): Promise<void> => {
    for (let round = 0; !stopping; round += 1) {
      const answer = await api(url, 'POST', '/add-messages', { token, body: batch(`L${lane}r${round}`) });
      if (answer.status !== 200 || answer.body.queued !== PER_REQUEST)
        throw new Error(`load request failed: ${answer.status} ${answer.text}`);
      acked += PER_REQUEST;
      requests += 1;
    }
  };
  const running = Promise.all(Array.from({ length: lanes }, (_, index) => lane(index)));
  return {
    /** Rejects when a request of the load fails (and never resolves otherwise). */
    failed: running.then(() => new Promise<never>(() => {})),
    acked: () => acked,
    requests: () => requests,
    async stop(): Promise<number> {
      stopping = true;
      await running;
      return acked;
    },
  };
}

describe('mailproxy backup and restore', () => {
  it(
    'takes a consistent backup while intake writes, and a daemon restored from it serves its messages',
    { timeout: 120_000 },
    async () => {
      const cwd = tempDir();
      const { url } = await serveUntilListening(cwd, { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0' }, started.running);
      const dataDir = join(cwd, 'data');
      const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
      const env = { MAILPROXY_URL: url, MAILPROXY_TOKEN: token };
      const tenant = await runCli(['tenants', 'add', 'acme', '--json'], { env });
      const tenantKey = JSON.parse(tenant.stdout).api_key as string;
      // Held, so that the dispatcher leaves the rows as intake wrote them (no relay is needed).
      await runCli(
        [
          'accounts',
          'add',
          'main',
          '--tenant',
          'acme',
          '--host',
          '127.0.0.1',
          '--port',
          String(await closedPort()),
          '--default',
        ],
        { env },
      );
      await runCli(['suspend', '--tenant', 'acme'], { env });

      // Enough data (some 16 MB) that the copy takes many steps, with writes in between.
      let prefilled = 0;
      for (let round = 0; round < 40; round += 1) {
        const answer = await api(url, 'POST', '/add-messages', { token, body: batch(`P${round}`, 100) });
        prefilled += answer.body.queued as number;
      }
      expect(prefilled).toBe(4000);

      const load = writeLoad(url, token, 2);
      // The load is under way before the backup starts.
      while (load.requests() < 4) await Promise.race([load.failed, new Promise((resolve) => setImmediate(resolve))]);
      const ackedAtStart = prefilled + load.acked();
      const file = join(tempDir(), 'backup.db');
      const backup = await runCli(['backup', file, '--json'], { env });
      const ackedAtEnd = prefilled + load.acked();
      const ackedInAll = prefilled + (await load.stop());

      expect(backup.stderr).toBe('');
      expect(backup.code).toBe(0);
      const report = JSON.parse(backup.stdout);
      expect(report).toMatchObject({ ok: true, file, integrity: 'ok', schema_version: expect.any(Number) });
      expect(ackedAtEnd).toBeGreaterThan(ackedAtStart);
      expect(existsSync(`${file}.partial`)).toBe(false);
      // The daemon kept no copy of its own.
      expect(readdirSync(dataDir).filter((name) => name.includes('backup'))).toEqual([]);

      const db = new Database(file, { readonly: true });
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        const count = (db.prepare('SELECT count(*) AS n FROM messages').get() as { n: number }).n;
        expect(report.messages).toBe(count);
        expect(count).toBeGreaterThanOrEqual(ackedAtStart);
        expect(count).toBeLessThanOrEqual(ackedInAll);
        // A request's messages commit together: each request is in the backup whole or not at all.
        const partial = db
          .prepare(
            `SELECT substr(id, 1, instr(id, '-') - 1) AS request, count(*) AS n FROM messages GROUP BY request
        HAVING n <> CASE WHEN request LIKE 'P%' THEN 100 ELSE ${PER_REQUEST} END`,
          )
          .all();
        expect(partial).toEqual([]);
        // A message and its message.queued outbox row are written in one transaction: neither is in the backup without the other.
        const withoutEvent = db
          .prepare(
            `SELECT count(*) AS n FROM messages m
        WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.message_pk = m.pk AND o.event_type = 'message.queued')`,
          )
          .get() as { n: number };
        const withoutMessage = db
          .prepare(
            `SELECT count(*) AS n FROM outbox o
        WHERE o.event_type = 'message.queued' AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.pk = o.message_pk)`,
          )
          .get() as { n: number };
        expect([withoutEvent.n, withoutMessage.n]).toEqual([0, 0]);
      } finally {
        db.close();
      }

      // One backup at a time, held while it streams; a client that goes away releases it.
      const streaming = await fetch(`${url}/backup`, { headers: { authorization: `Bearer ${token}` } });
      const reader = (streaming.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      expect((await api(url, 'GET', '/backup', { token })).body.error.code).toBe('CONFLICT');
      await reader.cancel();
      let next = await fetch(`${url}/backup`, { headers: { authorization: `Bearer ${token}` } });
      // The daemon learns of the closed connection on its own time: ask until it has.
      while (next.status === 409) {
        await next.body?.cancel();
        next = await fetch(`${url}/backup`, { headers: { authorization: `Bearer ${token}` } });
      }
      expect(next.status).toBe(200);
      await next.body?.cancel();

      // Restoring over the running daemon's database is refused, whether or not its API is reachable from here.
      const nowhere = `http://127.0.0.1:${await closedPort()}`;
      const overRunning = await runCli(['restore', file, '--force', '--url', nowhere], {
        env: { MAILPROXY_DATA_DIR: dataDir },
      });
      expect(overRunning.code).toBe(1);
      expect(overRunning.stderr).toContain('is open in another process (is the daemon running?)');
      const viaApi = await runCli(['restore', file, '--force', '--url', url], { env: { MAILPROXY_DATA_DIR: dataDir } });
      expect(viaApi.stderr).toBe(`mailproxy: mailproxy answers at ${url}: stop it before restoring\n`);

      // The documented procedure: a fresh data directory with the old secret.key, restore, start.
      const restoredCwd = tempDir();
      const restoredData = join(restoredCwd, 'data');
      const restoreEnv = { MAILPROXY_DATA_DIR: restoredData };
      const restore = await runCli(['restore', file, '--url', nowhere], { env: restoreEnv });
      expect(restore.code).toBe(0);
      expect(restore.stdout).toContain(`restored ${file} to ${join(restoredData, 'mailproxy.db')}`);
      expect(restore.stdout).toContain('secret.key is missing');
      copyFileSync(join(dataDir, 'secret.key'), join(restoredData, 'secret.key'));
      const again = await runCli(['restore', file, '--url', nowhere, '--json'], { env: restoreEnv });
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('exists: pass --force');
      const forced = await runCli(['restore', file, '--url', nowhere, '--force', '--json'], { env: restoreEnv });
      expect(JSON.parse(forced.stdout)).toMatchObject({
        ok: true,
        moved_aside: [expect.stringContaining('mailproxy.db.before-restore-')],
        secret_key_missing: false,
      });

      const { url: restoredUrl } = await serveUntilListening(
        restoredCwd,
        { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0' },
        started.running,
      );
      const restoredToken = readFileSync(join(restoredData, 'admin-token'), 'utf8').trim();
      const status = await api(restoredUrl, 'GET', '/status?tenant_id=acme', { token: restoredToken });
      expect(status.body.queue.waiting).toBe(report.messages);
      const first = await api(restoredUrl, 'GET', '/messages/P0-0?tenant_id=acme', { token: restoredToken });
      expect(first.body.message).toMatchObject({ id: 'P0-0', status: 'suspended', subject: 'load P0' });
      // The tenant's API key still works: the restored rows and the copied secret.key belong together.
      expect((await api(restoredUrl, 'GET', '/status', { token: tenantKey })).status).toBe(200);
    },
  );

  it('refuses an existing FILE without --force, and a tenant key', async () => {
    const cwd = tempDir();
    const { url } = await serveUntilListening(cwd, { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0' }, started.running);
    const token = readFileSync(join(cwd, 'data', 'admin-token'), 'utf8').trim();
    const file = join(cwd, 'taken.db');
    expect((await runCli(['backup', file], { env: { MAILPROXY_URL: url, MAILPROXY_TOKEN: token } })).stdout).toMatch(
      /^backup written to .*taken\.db: .*integrity ok\n$/,
    );
    const exists = await runCli(['backup', file], { env: { MAILPROXY_URL: url, MAILPROXY_TOKEN: token } });
    expect(exists).toMatchObject({ code: 1, stderr: `mailproxy: ${file} exists: pass --force to replace it\n` });
    const key = JSON.parse(
      (await runCli(['tenants', 'add', 'acme', '--json'], { env: { MAILPROXY_URL: url, MAILPROXY_TOKEN: token } }))
        .stdout,
    ).api_key as string;
    const forbidden = await runCli(['backup', join(cwd, 'other.db')], {
      env: { MAILPROXY_URL: url, MAILPROXY_TOKEN: key },
    });
    expect(forbidden.code).toBe(77);
    expect(forbidden.stderr).toContain('FORBIDDEN: this operation requires the admin token');
    expect(existsSync(join(cwd, 'other.db.partial'))).toBe(false);
  });
});
