/** The face of src/storage: the body store of large bodies (issue 46), its intake step and its removals. */
import type { BodyObjects } from '../core/message/index.js';
import { createFileObjects } from './file-objects.js';
import { withHealth, type ObjectBackend } from './object-health.js';
import { createS3Objects, type S3Settings } from './s3-objects.js';

export { createBodyOffload } from './body-offload.js';
export { createObjectRemoval } from './object-removal.js';

export { createFileSpool, type FileSpool } from './file-spool.js';

export interface BodyStoreSettings {
  /**
   * `database` never comes here: no body store is made for it (config/settings.ts). `jetstream`, the
   * fleet cluster's object store, is an adapter of src/nats that the daemon hands to `openBodyObjects`.
   */
  backend: 'embedded' | 's3' | 'jetstream' | 'database';
  /** The embedded store's directory (the data directory's `bodies/`). */
  directory: string;
  s3: S3Settings;
  /** What begins the names of the objects this daemon writes (a fleet node's id and a slash, or nothing). */
  ownNames: string;
}

/**
 * What reads large bodies on a daemon without a body store (fleet mode, backend `database`): the
 * data directory's `bodies/`, where one configured before may have left them. A body not there may
 * be in a bucket this daemon is no longer configured with: that is an error (the send is retried,
 * the message waits until the store is configured again), not a body found missing.
 */
export function bodiesLeftBehind(directory: string): Pick<BodyObjects, 'get'> {
  const files = createFileObjects(directory);
  return {
    async get(name) {
      const found = await files.get(name);
      if (found === null) throw new Error('the body is in a body store this daemon is not configured with ([storage])');
      return found;
    },
  };
}

/**
 * The configured body store, its health watched. Opening does not reach the store: /ready tells
 * whether it answers. `jetstream` makes the fleet cluster's object store (src/nats), called only when it is the backend.
 */
export async function openBodyObjects(
  settings: BodyStoreSettings,
  now: () => number,
  jetstream: () => ObjectBackend | Promise<ObjectBackend>,
): Promise<BodyObjects> {
  if (settings.backend === 's3') return withHealth('s3', await createS3Objects(settings.s3, settings.ownNames), now);
  if (settings.backend === 'jetstream') return withHealth('jetstream', await jetstream(), now);
  return withHealth('embedded', createFileObjects(settings.directory), now);
}
