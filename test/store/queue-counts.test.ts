/**
 * queue_counts (schema.sql, migration 10) is kept by triggers: whatever a
 * sequence of intakes, claims, outcomes, suspensions, priority changes,
 * resends, deletions and tenant removals does, it must equal counting the
 * messages themselves. Random sequences from a fixed seed, checked after
 * every step.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../src/store/migrations.js';
import { seededRng } from '../helpers/seeded-rng.js';

const WAITING = `CASE WHEN suspended = 1 AND state <> 'sending' THEN 'suspended' ELSE state END`;

describe('queue_counts', () => {
  it.each([1, 2, 3, 4, 5])('equals counting the messages after every step of a random sequence (seed %i)', (seed) => {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = ON');
    migrate(db, loadMigrations());
    const rng = seededRng(seed);
    const random = (): number => rng.next();
    const pick = <T>(items: readonly T[]): T => rng.pick(items);
    const tenants = ['acme', 'globex'];
    const addTenant = (id: string) => db.prepare(`INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES (?, ?, 0, 0, 0)`).run(id, `hash-${id}-${random()}`);
    for (const id of tenants) addTenant(id);
    let next = 0;
    const insert = db.prepare(`INSERT INTO messages (tenant_id, id, account_id, priority, source, mail_from, rcpt_to, state, suspended, next_attempt_at, created_at, updated_at)
      VALUES (?, ?, ?, ?, 'http', 'a@example.com', '[]', ?, ?, 0, 0, 0)`);
    const anyPk = (): number | undefined => (db.prepare('SELECT pk FROM messages ORDER BY random() LIMIT 1').pluck().get() as number | undefined);
    const intake = () => insert.run(pick(tenants), `m${next++}`, pick(['main', 'bulk']), Math.floor(random() * 4), pick(['queued', 'queued', 'deferred']), random() < 0.2 ? 1 : 0);
    // Intake three times as often as anything else, so that the queue grows over the sequence.
    const steps: Array<() => void> = [
      intake, intake, intake,
      () => db.prepare(`UPDATE messages SET state = ? WHERE pk = ?`).run(pick(['queued', 'deferred', 'sending', 'sent', 'error']), anyPk() ?? -1),
      () => db.prepare(`UPDATE messages SET suspended = ? WHERE tenant_id = ? AND state IN ('queued', 'deferred')`).run(random() < 0.5 ? 1 : 0, pick(tenants)),
      () => db.prepare(`UPDATE messages SET priority = ? WHERE pk = ?`).run(Math.floor(random() * 4), anyPk() ?? -1),
      () => db.prepare(`UPDATE messages SET next_attempt_at = next_attempt_at + 1, attempts = attempts + 1 WHERE pk = ?`).run(anyPk() ?? -1),
      () => db.prepare(`UPDATE messages SET state = 'queued', attempts = 0 WHERE state IN ('sent', 'error') AND pk = ?`).run(anyPk() ?? -1),
      () => db.prepare(`DELETE FROM messages WHERE pk = ?`).run(anyPk() ?? -1),
      () => {
        // A tenant removed: its messages go by the foreign key's cascade, which fires the triggers too.
        if (random() < 0.3) {
          const gone = pick(tenants);
          db.prepare('DELETE FROM tenants WHERE id = ?').run(gone);
          addTenant(gone);
        }
      },
    ];
    const counted = db.prepare(`SELECT tenant_id, account_id, ${WAITING} AS status, priority, count(*) AS count FROM messages
      WHERE state IN ('queued', 'deferred', 'sending') GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`);
    const kept = db.prepare(`SELECT tenant_id, account_id, status, priority, count FROM queue_counts WHERE count > 0 ORDER BY 1, 2, 3, 4`);
    let busiest = 0;
    for (let step = 0; step < 400; step += 1) {
      pick(steps)();
      const expected = counted.all();
      expect(kept.all(), `seed ${seed}, step ${step}`).toEqual(expected);
      busiest = Math.max(busiest, expected.length);
    }
    expect(db.prepare('SELECT count(*) FROM queue_counts WHERE count < 0').pluck().get()).toBe(0);
    // The sequences did spread messages over many counts, not compare two empty lists.
    expect(busiest).toBeGreaterThan(8);
  });

  it('is filled from the messages already stored when the migration runs', () => {
    const db = new Database(':memory:');
    const migrations = loadMigrations();
    const version = migrations.findIndex((migration) => migration.sql.includes('CREATE TABLE queue_counts'));
    expect(version).toBeGreaterThan(0);
    migrate(db, migrations.slice(0, version));
    db.prepare(`INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('acme', 'h', 0, 0, 0)`).run();
    const insert = db.prepare(`INSERT INTO messages (tenant_id, id, account_id, priority, source, mail_from, rcpt_to, state, suspended, next_attempt_at, created_at, updated_at)
      VALUES ('acme', ?, 'main', ?, 'http', 'a@example.com', '[]', ?, ?, 0, 0, 0)`);
    const states = ['queued', 'deferred', 'sending', 'sent', 'error'];
    for (let index = 0; index < 60; index += 1) insert.run(`m${index}`, index % 4, states[index % 5], index % 7 === 0 ? 1 : 0);
    migrate(db, migrations);
    const kept = db.prepare(`SELECT status, priority, count FROM queue_counts WHERE count > 0 ORDER BY 1, 2`).all();
    const counted = db.prepare(`SELECT ${WAITING} AS status, priority, count(*) AS count FROM messages WHERE state IN ('queued', 'deferred', 'sending') GROUP BY 1, 2 ORDER BY 1, 2`).all();
    expect(kept).toEqual(counted);
    expect(kept.length).toBeGreaterThan(6);
  });
});
