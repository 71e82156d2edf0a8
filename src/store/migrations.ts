/**
 * Versioned migrations from schema.sql: each `-- migration: N` block runs once,
 * in its own transaction, and PRAGMA user_version records the last applied.
 * A database written by a newer version is refused rather than guessed at.
 */
import { readFileSync } from 'node:fs';
import type { Database } from 'better-sqlite3';
import { AppError } from '../core/index.js';

export interface Migration {
  version: number;
  sql: string;
}

const MARKER = /^--\s*migration:\s*(\d+)\s*$/gm;

export function parseMigrations(schemaText: string): Migration[] {
  const markers = [...schemaText.matchAll(MARKER)];
  const migrations = markers.map((marker, index) => {
    const start = (marker.index ?? 0) + marker[0].length;
    const end = markers[index + 1]?.index ?? schemaText.length;
    return { version: Number(marker[1]), sql: schemaText.slice(start, end).trim() };
  });
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`schema.sql: migration ${migration.version} found where ${index + 1} was expected`);
    }
  });
  return migrations;
}

export function loadMigrations(): Migration[] {
  // schema.sql sits at the package root, two levels above both src/store and dist/store.
  return parseMigrations(readFileSync(new URL('../../schema.sql', import.meta.url), 'utf8'));
}

/** Applies pending migrations; answers the versions applied. */
export function migrate(db: Database, migrations: Migration[]): number[] {
  const current = db.pragma('user_version', { simple: true }) as number;
  const latest = migrations.length;
  if (current > latest) {
    throw new AppError(
      'STORE_UNAVAILABLE',
      'database schema is newer than this mailproxy; upgrade mailproxy or restore a backup',
      {
        details: { database_version: current, supported_version: latest },
      },
    );
  }
  const applied: number[] = [];
  for (const migration of migrations.slice(current)) {
    db.transaction(() => {
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
    applied.push(migration.version);
  }
  return applied;
}
