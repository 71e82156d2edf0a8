/**
 * `mailproxy backup FILE`: asks the running daemon for a consistent copy of its
 * database (GET /backup; it goes on writing meanwhile) and writes it to FILE
 * only once it is whole, synced and checked: FILE.partial while it arrives,
 * renamed to FILE after `PRAGMA integrity_check` and the schema version pass.
 */
import { existsSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ApiClient } from '../api-client.js';
import { cliError, EXIT_OK, failed, ok, report, type Result } from '../cli-error.js';
import type { CliContext, Command } from '../command.js';
import { bytes, progress, writeJson } from '../output.js';

/** Streams the response body into `partial`, synced; answers how many bytes arrived. */
async function download(client: ApiClient, partial: string, cli: CliContext): Promise<Result<number>> {
  if (cli.stderr.isTTY === true)
    cli.stderr.write(`asking mailproxy at ${client.url} for a backup (it copies its database first)...\n`);
  const answer = await client.stream('/backup');
  if (!answer.ok) return answer;
  const response = answer.value;
  const length = Number(response.headers.get('content-length'));
  const total = Number.isSafeInteger(length) && length > 0 ? length : null;
  const meter = progress(cli.stderr, 'received', total);
  const file = await open(partial, 'w', 0o600);
  let received = 0;
  try {
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      await file.write(value);
      received += value.byteLength;
      meter.update(received);
    }
    await file.sync();
  } catch (error) {
    return failed(
      cliError(
        'UNREACHABLE',
        `the backup from ${client.url} broke off after ${bytes(received)}: ${(error as Error).message}`,
      ),
    );
  } finally {
    meter.finish();
    await file.close();
  }
  if (total !== null && received !== total)
    return failed(cliError('BAD_RESPONSE', `the backup from ${client.url} ended after ${received} of ${total} bytes`));
  return ok(received);
}

export const backupCommand: Command = {
  name: 'backup',
  summary: "A consistent copy of the running daemon's database.",
  notes: `The daemon keeps running and writing. Keep the data directory's secret.key with the
backup (separately: it is not in it): sealed credentials and tenant API keys need it.
Exit codes: 0 written and checked, 1 failed (nothing is left under FILE), 69 daemon unreachable,
77 token refused.
`,
  verbs: {
    '': {
      usage: 'FILE [--force]',
      summary: 'write the backup to FILE (--force: replace an existing FILE), checked before it takes the name',
      options: { force: { type: 'boolean' } },
      positionals: [1, 1],
      api: true,
      run: async (input) => {
        const { cli } = input;
        const target = input.positionals[0] ?? '';
        if (existsSync(target) && input.values.force !== true)
          return report(cli.stderr, cliError('FILE_ERROR', `${target} exists: pass --force to replace it`));
        const client = input.connect();
        if (!client.ok) return report(cli.stderr, client.error);
        const partial = `${target}.partial`;
        let received: Result<number>;
        try {
          received = await download(client.value, partial, cli);
        } catch (error) {
          received = failed(cliError('FILE_ERROR', `cannot write ${partial}: ${(error as Error).message}`));
        }
        if (!received.ok) {
          await rm(partial, { force: true });
          return report(cli.stderr, received.error);
        }
        // The store (and its native SQLite binding) is loaded by the verbs that open files, not by every command.
        const { checkDatabaseFile, syncFile } = await import('../../store/index.js');
        const check = checkDatabaseFile(partial);
        if (!check.ok)
          return report(
            cli.stderr,
            cliError('BACKUP_INVALID', `the backup failed its check, left as ${partial}: ${check.problem}`),
          );
        await rename(partial, target);
        syncFile(dirname(target));
        if (input.json) {
          writeJson(cli.stdout, {
            ok: true,
            file: target,
            bytes: check.bytes,
            schema_version: check.schemaVersion,
            messages: check.messages,
            integrity: 'ok',
          });
        } else {
          cli.stdout.write(
            `backup written to ${target}: ${bytes(check.bytes)}, schema version ${check.schemaVersion}, ${check.messages} message${check.messages === 1 ? '' : 's'}, integrity ok\n`,
          );
        }
        return EXIT_OK;
      },
    },
  },
};
