/**
 * Offloaded attachments as the database keeps them (migration 30): recorded with the outcome of
 * the attempt whose message carried their links, looked up by the id a link's token names, counted
 * when downloaded, and expired with their links. Expiry and erasure take the key and the object
 * together; a trigger lists the object for the body store's removal in the same statement.
 */
import type { FileRecord, OffloadedFiles } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';
import { IDENTITY_COLUMNS, transitionOf, type IdentityRow, type MessageEventWriter } from './message-event-writer.js';

/** The most `downloaded` events one file records (each one is a report item and a stream message). */
const MAX_DOWNLOAD_EVENTS = 100;

/** A file as a download finds it (core/message/file-downloads.ts). */
interface FileRow {
  file_id: string;
  object: string | null;
  file_key: Buffer | null;
  expires_at: number;
}

const toFile = (row: FileRow): FileRecord => ({
  fileId: row.file_id,
  object: row.object,
  key: row.file_key,
  expiresAt: row.expires_at,
});

/** Records an attempt's files, inside the outcome's transaction. */
export function createFileRecorder(db: SqliteDatabase) {
  // A message sent again (resend) keeps its files' ids and links: the row takes the new object, and
  // the trigger lists the old one for removal.
  const upsert = db.prepare(`INSERT INTO message_files
      (file_id, message_pk, tenant_id, file_index, object, file_key, size_bytes, expires_at, created_at)
    VALUES (@file_id, @message_pk, @tenant_id, @file_index, @object, @file_key, @size_bytes, @expires_at, @at)
    ON CONFLICT (file_id) DO UPDATE SET message_pk = excluded.message_pk, object = excluded.object,
      file_key = excluded.file_key, size_bytes = excluded.size_bytes, expires_at = excluded.expires_at`);
  const discard = db.prepare<[string]>(`INSERT OR IGNORE INTO object_removals (object) VALUES (?)`);
  return {
    /** The files of a message the relay took: their links live until `at + lifetimeMs`. */
    keep(files: OffloadedFiles, message: { pk: number; tenantId: string }, at: number): void {
      for (const file of files.files)
        upsert.run({
          file_id: file.fileId,
          message_pk: message.pk,
          tenant_id: message.tenantId,
          file_index: file.index,
          object: file.object,
          file_key: Buffer.from(file.key),
          size_bytes: file.sizeBytes,
          expires_at: at + files.lifetimeMs,
          at,
        });
    },
    /** The files of an attempt that did not send (or whose message was erased meanwhile): removed. */
    discard(files: OffloadedFiles): void {
      for (const file of files.files) discard.run(file.object);
    },
  };
}

export interface MessageFiles {
  /** The file a link names, live or not; null when there is none of that id. */
  find(fileId: string): FileRecord | null;
  /**
   * Counts a download and records its `downloaded` event (reported to the client) in the same
   * transaction (nothing when the file or its message is gone).
   */
  downloaded(fileId: string, at: number): void;
  /** Takes key and object from files whose links expired before `now`, up to `limit`; answers how many. */
  expire(now: number, limit: number): number;
}

export function createMessageFiles(db: SqliteDatabase, writeEvent: MessageEventWriter): MessageFiles {
  const find = db.prepare<[string], FileRow>(
    `SELECT file_id, object, file_key, expires_at FROM message_files WHERE file_id = ?`,
  );
  const count = db.prepare<[string], { downloads: number; message_pk: number; file_index: number }>(
    `UPDATE message_files SET downloads = downloads + 1 WHERE file_id = ? RETURNING downloads, message_pk, file_index`,
  );
  const message = db.prepare<[number], IdentityRow>(`SELECT ${IDENTITY_COLUMNS} FROM messages WHERE pk = ?`);
  const downloaded = db.transaction((fileId: string, at: number): void => {
    const counted = count.get(fileId);
    const row = counted === undefined ? undefined : message.get(counted.message_pk);
    // Link checkers and forwarded mail may fetch a link over and over: the count goes on, the events stop.
    if (counted === undefined || row === undefined || counted.downloads > MAX_DOWNLOAD_EVENTS) return;
    writeEvent(
      transitionOf(row, 'downloaded', at, {
        text: `attachment ${counted.file_index + 1} downloaded`,
        data: { file_index: counted.file_index, downloads: counted.downloads },
      }),
    );
  });
  const due = db
    .prepare<{ now: number }, number>(
      `SELECT 1 FROM message_files WHERE object IS NOT NULL AND expires_at <= @now LIMIT 1`,
    )
    .pluck();
  const expire = db.prepare<{ now: number; limit: number }>(`UPDATE message_files SET object = NULL, file_key = NULL
    WHERE file_id IN (SELECT file_id FROM message_files WHERE object IS NOT NULL AND expires_at <= @now LIMIT @limit)`);
  return {
    find: (fileId) => {
      const row = find.get(fileId);
      return row === undefined ? null : toFile(row);
    },
    downloaded: (fileId, at) => downloaded.immediate(fileId, at),
    // Asked first with a read: the loop runs every few seconds, and a write transaction with
    // nothing to write would still wait for the writer's lock (a backup or an operator's CLI
    // holding it would stall the main thread for the busy timeout at every run).
    expire: (now, limit) =>
      due.get({ now }) === undefined ? 0 : db.transaction(() => expire.run({ now, limit }).changes).immediate(),
  };
}
