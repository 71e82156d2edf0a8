/**
 * The configuration's [storage] section: where large message bodies live (issue 46). Small bodies
 * stay in the database; one larger than `inline_max_bytes` goes, sealed, to the body store: the
 * data directory's `bodies/` (embedded, the default), an S3-compatible bucket, or in fleet mode the
 * cluster's JetStream object store.
 */
import { z } from 'zod';

const positiveInt = z.number().int().positive();

const s3Section = z
  .object({
    bucket: z.string().default(''),
    // Every object's key starts with it: one bucket can hold several daemons' bodies apart.
    prefix: z.string().max(512).default('mailproxy/bodies/'),
    region: z.string().min(1).default('us-east-1'),
    // Empty: AWS's own endpoint for the region. MinIO and other S3 servers: their URL.
    endpoint: z
      .string()
      .refine((text) => text === '' || /^https?:\/\/[^\s]+$/.test(text), {
        message: 'expected an http(s) URL, or empty',
      })
      .default(''),
    // Path-style addressing (http://host/bucket/key), which MinIO and most S3 servers other than AWS need.
    force_path_style: z.boolean().default(false),
    // Both empty: the standard AWS credential chain (environment, shared files, instance role).
    access_key_id: z.string().default(''),
    secret_access_key: z.string().default(''),
    timeout_seconds: positiveInt.max(300).default(10),
  })
  .strict()
  .refine((s3) => (s3.access_key_id === '') === (s3.secret_access_key === ''), {
    message: 'access_key_id and secret_access_key are set together, or both left empty',
    path: ['secret_access_key'],
  });

const jetstreamSection = z
  .object({
    // The object store's bucket on the fleet's cluster (its stream: OBJ_<bucket>), with fleet.replicas replicas.
    bucket: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only')
      .default('mailproxy_bodies'),
    timeout_seconds: positiveInt.max(300).default(10),
  })
  .strict();

export const storageSection = z
  .object({
    // "database": every body in the database, as before there was a body store (one file to back up).
    // "jetstream": fleet mode only, the cluster's object store shared by every node.
    backend: z.enum(['embedded', 's3', 'jetstream', 'database']).default('embedded'),
    // Sealed bodies up to this size stay in the database; larger ones go to the body store.
    inline_max_bytes: z
      .number()
      .int()
      .min(0)
      .default(128 * 1024),
    // How often objects no message needs any more are removed from the store (and the store probed).
    removal_interval_seconds: positiveInt.max(3600).default(10),
    s3: s3Section.prefault({}),
    jetstream: jetstreamSection.prefault({}),
  })
  .strict()
  .refine((storage) => storage.backend !== 's3' || storage.s3.bucket !== '', {
    message: 'the s3 backend needs storage.s3.bucket',
    path: ['s3', 'bucket'],
  })
  .prefault({});
