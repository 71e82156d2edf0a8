/**
 * The body store's settings (storage-schema.ts): where large bodies go, and what begins the names
 * of the objects this daemon writes.
 */
import { join } from 'node:path';
import type { Config } from './schema.js';

const SECOND = 1000;

/**
 * Where large bodies go (storage-schema.ts). Null, every body in the database, with the backend
 * `database`, and in fleet mode with `embedded` (a node's own directory): the replicated spool then
 * carries the bytes. A fleet's nodes sharing an S3 bucket or the cluster's object store hand each
 * other the objects' names.
 */
export const storageSettings = ({ storage, data_dir, fleet, smtp, nats }: Readonly<Config>) =>
  storage.backend === 'database' || (fleet.enabled && storage.backend === 'embedded')
    ? null
    : {
        backend: storage.backend,
        /** Large SMTP submissions being received, part by part (src/storage/file-spool.ts). */
        spoolDirectory: join(data_dir, 'spool'),
        /** No SMTP transfer outlives its data timeout: an older spool no message took was abandoned. */
        abandonedSpoolMs: 2 * smtp.data_timeout_seconds * SECOND,
        inlineMaxBytes: storage.inline_max_bytes,
        removalIntervalMs: storage.removal_interval_seconds * SECOND,
        directory: join(data_dir, 'bodies'),
        s3: {
          bucket: storage.s3.bucket,
          prefix: storage.s3.prefix,
          region: storage.s3.region,
          endpoint: storage.s3.endpoint,
          forcePathStyle: storage.s3.force_path_style,
          accessKeyId: storage.s3.access_key_id,
          secretAccessKey: storage.s3.secret_access_key,
          timeoutMs: storage.s3.timeout_seconds * SECOND,
        },
        jetstream: {
          url: nats.url,
          bucket: storage.jetstream.bucket,
          replicas: fleet.replicas,
          timeoutMs: storage.jetstream.timeout_seconds * SECOND,
        },
        ownNames: ownNamesOf(fleet),
      };

/**
 * What begins the names of the objects this daemon writes: in a fleet, its node id and a slash. The
 * nodes share the bucket, and each sweeps only the objects it wrote (storage/object-removal.ts).
 */
const ownNamesOf = (fleet: Readonly<Config>['fleet']): string => (fleet.enabled ? `${fleet.node_id}/` : '');
