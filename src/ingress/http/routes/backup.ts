/**
 * `GET /backup` (admin token): a consistent copy of the database, taken while
 * the daemon goes on writing, streamed as the response body. The store makes
 * the copy; this route only serves it and lets it go.
 */
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { Hono } from 'hono';
import { AppError, type Logger } from '../../../core/index.js';
import { requireAdmin } from '../../../core/tenant/index.js';
import type { HttpEnv } from '../env.js';
import { on, type RouteDoc } from '../route-doc.js';

/** Takes a consistent copy of the database into a temporary file (the store's snapshot). */
export interface DatabaseBackups {
  snapshot(): Promise<{ path: string; bytes: number; remove(): void }>;
}

export const BACKUP_ROUTES = {
  backup: {
    method: 'get',
    path: '/backup',
    tag: 'Operations',
    summary:
      'A consistent copy of the database, taken while the daemon goes on writing (one at a time: 409 while another is taken); `mailproxy backup FILE` saves and checks it',
    access: 'admin',
    responses: { 200: { description: 'The SQLite database file', contentType: 'application/vnd.sqlite3' } },
    errors: ['CONFLICT'],
  },
} as const satisfies Record<string, RouteDoc>;

export function backupRoutes(backups: DatabaseBackups, log: Logger): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  // One copy at a time, until it has been streamed: each is the size of the database, on the database's disk.
  let copying = false;

  on(app, BACKUP_ROUTES.backup, async (c) => {
    requireAdmin(c.get('principal'));
    if (copying) throw new AppError('CONFLICT', 'a backup is being taken already; try again when it is done');
    copying = true;
    let stream;
    let bytes;
    try {
      const startedAt = performance.now();
      const snapshot = await backups.snapshot();
      bytes = snapshot.bytes;
      let file;
      try {
        file = await open(snapshot.path, 'r');
      } finally {
        // Unlinked at once: the open descriptor reads it to the end, and a client
        // that goes away (or a crash) leaves no copy behind.
        snapshot.remove();
      }
      log.info({ bytes, durationMs: Math.round(performance.now() - startedAt) }, 'backup taken');
      stream = file.createReadStream();
    } catch (error) {
      copying = false;
      throw error;
    }
    // Read to the end or abandoned by the client: either way the descriptor, and the space, are released.
    stream.once('close', () => {
      copying = false;
    });
    return c.body(Readable.toWeb(stream) as ReadableStream<Uint8Array>, 200, {
      'content-type': 'application/vnd.sqlite3',
      'content-length': String(bytes),
      'content-disposition': 'attachment; filename="mailproxy-backup.db"',
    });
  });

  return app;
}
