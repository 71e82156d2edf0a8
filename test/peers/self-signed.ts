/**
 * A self-signed certificate made by the openssl CLI, for the test peers that speak TLS (an SMTP
 * sink, an SNS-like HTTPS peer): written as `<name>.key` and `<name>.pem` in `dir`, valid for
 * 127.0.0.1 and localhost, and read back.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export async function selfSigned(
  dir: string,
  name: string,
  cn: string,
): Promise<{ key: Buffer; cert: Buffer; keyFile: string; certFile: string }> {
  const [keyFile, certFile] = [join(dir, `${name}.key`), join(dir, `${name}.pem`)];
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-days',
    '2',
    '-subj',
    `/CN=${cn}`,
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ]);
  return { key: await readFile(keyFile), cert: await readFile(certFile), keyFile, certFile };
}
