/**
 * The embedded body store: each object a file in the data directory's `bodies/`, beside the
 * database, so that large bodies do not grow it (nor its backups and WAL). A put is durable when
 * it resolves: written to a temporary name, fsynced, renamed over its name, and the directory
 * fsynced, so a crash leaves the whole object or none.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { ObjectBackend } from './object-health.js';

/** Object names are ours (hex), never a client's: anything else is refused before it reaches a path. */
const NAME = /^[0-9a-f]{16,64}$/;

function pathOf(root: string, name: string): { dir: string; file: string } {
  if (!NAME.test(name)) throw new Error('not a body object name');
  // 256 directories: no directory holds more than a few thousand files at once.
  const dir = join(root, name.slice(0, 2));
  return { dir, file: join(dir, name) };
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const isMissing = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT';

/** A directory's entries; none when it does not exist (nothing was stored yet). */
async function entriesOf(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw error;
  }
}

export function createFileObjects(root: string): ObjectBackend {
  /** Directories made and fsynced into their parent since start. */
  const made = new Set<string>();
  const directory = async (dir: string): Promise<void> => {
    if (made.has(dir)) return;
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await syncDirectory(root);
    made.add(dir);
  };
  return {
    async put(name, bytes) {
      const { dir, file } = pathOf(root, name);
      await directory(dir);
      const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
      const handle = await open(temporary, 'wx', 0o600);
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, file);
      await syncDirectory(dir);
    },
    async get(name) {
      try {
        return await readFile(pathOf(root, name).file);
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
    },
    async remove(name) {
      try {
        await unlink(pathOf(root, name).file);
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    },
    async list(before) {
      const names: string[] = [];
      for (const dir of await entriesOf(root)) {
        for (const entry of await entriesOf(join(root, dir))) {
          const path = join(root, dir, entry);
          const written = (await stat(path).catch(() => null))?.mtimeMs;
          if (written === undefined || written >= before) continue;
          // A temporary file of a put that never finished (the daemon stopped in between) goes at once.
          if (entry.endsWith('.tmp')) await unlink(path).catch(() => undefined);
          else if (NAME.test(entry)) names.push(entry);
        }
      }
      return names;
    },
    async probe() {
      await mkdir(root, { recursive: true, mode: 0o700 });
      await access(root, constants.W_OK);
      return true;
    },
    close: async () => undefined,
  };
}
