/**
 * SIGKILL during an erasure (issue 45): the built daemon erases thousands of messages to one
 * address in one transaction and is killed at a random moment of it. After a restart every
 * message is either erased (no key, no body, no address) or untouched (its body opens to what was
 * submitted): all of them the one way, never a row whose key is gone but whose body was meant to
 * stay, nor the reverse.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { serveUntilListening } from '../helpers/daemon-process.js';
import { tearDownProcesses } from '../helpers/process-teardown.js';
import { storedBody } from '../helpers/stored-body.js';
import { api } from '../helpers/test-daemon.js';

const PER_ROUND = 3000;
const ROUNDS = 4;
const ENV = { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0' };

const { dirs, running } = tearDownProcesses();

interface Row {
  id: string;
  erased_at: number | null;
  has_key: number;
  has_body: number;
  mail_from: string;
}

describe('SIGKILL during an erasure', () => {
  it('leaves every message of the request erased whole or untouched, all of them the same way', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'mailproxy-erase-crash-'));
    dirs.push(cwd);
    const dataDir = join(cwd, 'data');
    let node = await serveUntilListening(cwd, ENV, running);
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const admin = (method: string, path: string, body?: unknown) => api(node.url, method, path, { token, body });
    expect((await admin('POST', '/tenant', { id: 'acme' })).status).toBe(201);
    const account = { id: 'main', tenant_id: 'acme', host: '127.0.0.1', port: 9, tls_mode: 'none', is_default: true };
    expect((await admin('POST', '/account', account)).status).toBe(201);
    // Nothing is relayed: every message waits, and the erasure stops them all.
    expect((await admin('POST', '/commands/suspend', { tenant_id: 'acme' })).status).toBe(200);

    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const address = `person-${round}@example.net`;
      for (let start = 0; start < PER_ROUND; start += 1000) {
        const messages = Array.from({ length: 1000 }, (_, index) => ({
          id: `r${round}-${start + index}`,
          tenant_id: 'acme',
          from: 'app@acme.example',
          to: address,
          subject: `statement ${start + index}`,
          body: `the body of r${round}-${start + index}`,
        }));
        const posted = await admin('POST', '/add-messages', { messages });
        expect(posted.body, posted.text).toMatchObject({ ok: true, queued: 1000 });
      }
      // Killed somewhere between before the request arrives and after it is answered.
      const erasing = admin('POST', '/commands/erase', { tenant_id: 'acme', address }).catch(() => null);
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 400)));
      node.daemon.child.kill('SIGKILL');
      await node.daemon.exited;
      const answered = await erasing;
      node = await serveUntilListening(cwd, ENV, running);

      const db = new Database(join(dataDir, 'mailproxy.db'), { readonly: true });
      try {
        const rows = db
          .prepare(
            `SELECT id, erased_at, body_key IS NOT NULL AS has_key, mail_from,
               (SELECT count(*) FROM message_bodies b WHERE b.pk = m.pk) AS has_body
             FROM messages m WHERE id LIKE ? ORDER BY pk`,
          )
          .all(`r${round}-%`) as Row[];
        expect(rows).toHaveLength(PER_ROUND);
        const erased = rows.filter((row) => row.erased_at !== null);
        // An erased message's key is gone (its sealed bytes wait for retention); a kept one has both.
        for (const row of erased) expect([row.has_key, row.mail_from]).toEqual([0, '']);
        for (const row of rows.filter((kept) => kept.erased_at === null))
          expect([row.has_key, row.has_body]).toEqual([1, 1]);
        expect([0, PER_ROUND]).toContain(erased.length);
        // An untouched message's body still opens to what was submitted.
        if (erased.length === 0)
          expect(storedBody(db, { dataDir }, 'id = ?', `r${round}-7`)?.toString()).toContain(`the body of r${round}-7`);
        outcomes.push(
          `${erased.length === 0 ? 'untouched' : 'erased'}${answered?.status === 200 ? ' (answered before the kill)' : ''}`,
        );
      } finally {
        db.close();
      }
    }
    console.log(`erasure crash: ${outcomes.join('; ')}`);
  }, 180_000);
});
