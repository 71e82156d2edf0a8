/**
 * The S3-compatible body store (AWS S3, MinIO and the like): each object under `prefix` in one
 * bucket. A put resolves once the bucket acknowledged it (S3 writes are durable when acknowledged).
 * The SDK is loaded only when this backend is configured: a daemon with the embedded store never
 * loads it. Credentials come from the configuration, or else from the SDK's standard chain (the
 * AWS environment variables, shared files, instance roles).
 */
import type { ObjectBackend } from './object-health.js';

export interface S3Settings {
  bucket: string;
  prefix: string;
  region: string;
  /** Empty: AWS's own endpoint for the region. */
  endpoint: string;
  forcePathStyle: boolean;
  /** Both empty: the SDK's standard credential chain. */
  accessKeyId: string;
  secretAccessKey: string;
  /** A request that has not answered by then fails (the submission is refused, the send retried). */
  timeoutMs: number;
}

const isMissing = (error: unknown): boolean => {
  const named = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return named.name === 'NoSuchKey' || named.name === 'NotFound' || named.$metadata?.httpStatusCode === 404;
};

/**
 * `ownNames` begins the names of the objects this daemon writes (a fleet node's id and a slash, or
 * nothing): `list` answers only those, so a sweep never takes what another node sharing the bucket wrote.
 */
export async function createS3Objects(settings: S3Settings, ownNames: string): Promise<ObjectBackend> {
  const s3 = await import('@aws-sdk/client-s3');
  const client = new s3.S3Client({
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    // One retry: a submission waits on the put, and a store that is down must be refused quickly.
    maxAttempts: 2,
    requestHandler: { connectionTimeout: settings.timeoutMs, requestTimeout: settings.timeoutMs },
    ...(settings.endpoint === '' ? {} : { endpoint: settings.endpoint }),
    ...(settings.accessKeyId === ''
      ? {}
      : { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }),
  });
  const Bucket = settings.bucket;
  const keyOf = (name: string): string => `${settings.prefix}${name}`;
  return {
    async put(name, bytes) {
      await client.send(new s3.PutObjectCommand({ Bucket, Key: keyOf(name), Body: bytes }));
    },
    async get(name) {
      try {
        const answer = await client.send(new s3.GetObjectCommand({ Bucket, Key: keyOf(name) }));
        if (answer.Body === undefined) return null;
        return Buffer.from(await answer.Body.transformToByteArray());
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
    },
    async remove(name) {
      // S3 answers a delete of a missing key as done.
      await client.send(new s3.DeleteObjectCommand({ Bucket, Key: keyOf(name) }));
    },
    async list(before) {
      const names: string[] = [];
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(
          new s3.ListObjectsV2Command({ Bucket, Prefix: keyOf(ownNames), ContinuationToken }),
        );
        for (const object of page.Contents ?? [])
          if (object.Key !== undefined && (object.LastModified?.getTime() ?? before) < before)
            names.push(object.Key.slice(settings.prefix.length));
        ContinuationToken = page.IsTruncated === true ? page.NextContinuationToken : undefined;
      } while (ContinuationToken !== undefined);
      return names;
    },
    async probe() {
      await client.send(new s3.HeadBucketCommand({ Bucket }));
      return true;
    },
    close: async () => client.destroy(),
  };
}
