/** The face of src/storage: the body store of large bodies (issue 46), its intake step and its removals. */
import type { BodyObjects } from '../core/message/index.js';
import { createFileObjects } from './file-objects.js';
import { withHealth } from './object-health.js';
import { createS3Objects, type S3Settings } from './s3-objects.js';

export { createBodyOffload } from './body-offload.js';
export { createObjectRemoval } from './object-removal.js';

export interface BodyStoreSettings {
  backend: 'embedded' | 's3';
  /** The embedded store's directory (the data directory's `bodies/`). */
  directory: string;
  s3: S3Settings;
}

/** The configured body store, its health watched. Opening does not reach the store: /ready tells whether it answers. */
export async function openBodyObjects(settings: BodyStoreSettings, now: () => number): Promise<BodyObjects> {
  if (settings.backend === 'embedded') return withHealth('embedded', createFileObjects(settings.directory), now);
  return withHealth('s3', await createS3Objects(settings.s3), now);
}
