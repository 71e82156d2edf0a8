// A real S3 API server (s3rver, over a directory) in its own process for the body-store scenario:
// prints {"port"} once its bucket exists, and stops when its stdin closes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

const directory = mkdtempSync(join(tmpdir(), 'bench-s3rver-'));
const server = new S3rver({
  port: 0,
  address: '127.0.0.1',
  directory,
  silent: true,
  configureBuckets: [{ name: 'bench' }],
});
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);
process.stdin.resume();
process.stdin.on('end', async () => {
  await server.close();
  rmSync(directory, { recursive: true, force: true });
  process.exit(0);
});
