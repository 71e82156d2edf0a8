/**
 * A real S3 API server for tests: s3rver (the S3 REST API over a directory), on a random loopback
 * port with a bucket of its own. `stop()` takes it away (the daemon's body store then fails) and
 * `start()` brings it back on the same port with the same objects.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import S3rver from 's3rver';

export interface S3Server {
  endpoint: string;
  bucket: string;
  /** The [storage.s3] section of a daemon whose body store is this bucket (`[storage] backend = "s3"` beside it). */
  toml(prefix?: string): string;
  /** Writes an object into the bucket. */
  put(key: string, bytes: Buffer): Promise<void>;
  /** How many objects the bucket holds under `prefix`. */
  count(prefix: string): Promise<number>;
  /** An object's bytes as the bucket holds them; null when there is none. */
  object(key: string): Promise<Buffer | null>;
  stop(): Promise<void>;
  start(): Promise<void>;
  cleanup(): Promise<void>;
}

const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export async function startS3Server(bucket = 'mailproxy-bodies'): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), 's3rver-'));
  let port = 0;
  let server: S3rver | null = null;
  const run = async (): Promise<void> => {
    server = new S3rver({ port, address: '127.0.0.1', directory, silent: true });
    ({ port } = await server.run());
  };
  await run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1', credentials: CREDENTIALS });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  const stop = async (): Promise<void> => {
    const running = server;
    server = null;
    await running?.close();
  };
  return {
    endpoint,
    bucket,
    toml: (prefix = 'bodies/') =>
      [
        '[storage.s3]',
        `bucket = "${bucket}"`,
        `prefix = "${prefix}"`,
        `endpoint = "${endpoint}"`,
        'force_path_style = true',
        `access_key_id = "${CREDENTIALS.accessKeyId}"`,
        `secret_access_key = "${CREDENTIALS.secretAccessKey}"`,
        'timeout_seconds = 2',
        '',
      ].join('\n'),
    async put(key, bytes) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
    },
    async count(prefix) {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
      return listed.KeyCount ?? 0;
    },
    async object(key) {
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return answer.Body === undefined ? null : Buffer.from(await answer.Body.transformToByteArray());
      } catch (error) {
        if ((error as { name?: string }).name === 'NoSuchKey') return null;
        throw error;
      }
    },
    stop,
    start: run,
    async cleanup() {
      await stop();
      client.destroy();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
