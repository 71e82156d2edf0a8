/**
 * `mailproxy restore FILE`: puts a backup in place of the daemon's database,
 * offline. Refused while the daemon runs (its API answers, or SQLite says the
 * database is open); the current database is moved aside, never deleted.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SECRET_KEY_FILE } from '../../security/index.js';
import { cliError, EXIT_OK, report, type CliErrorCode } from '../cli-error.js';
import type { Command } from '../command.js';
import { readConfig, resolveUrl } from '../connection.js';
import { bytes, writeJson } from '../output.js';

/** Whether anything answers the daemon's public health route at `url`. */
async function answers(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/health`, { signal: AbortSignal.timeout(3000) });
    return true;
  } catch {
    return false;
  }
}

const stampOf = (date: Date): string =>
  date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');

export const restoreCommand: Command = {
  name: 'restore',
  summary: 'Put a backup in place of the database (the daemon stopped).',
  notes: `Stop the daemon first. FILE is checked (integrity, schema version not newer than this
mailproxy); the current database and its -wal/-shm are renamed to
mailproxy.db.before-restore-<time>; FILE is copied in whole. Start the daemon again after.
`,
  verbs: {
    '': {
      usage: 'FILE [-c CONFIG] [--url URL] [--force] [--json]',
      summary: "restore FILE into the config's data_dir; --force when a database is there already",
      options: { config: { type: 'string', short: 'c' }, url: { type: 'string' }, force: { type: 'boolean' } },
      positionals: [1, 1],
      api: false,
      run: async ({ values, positionals, cli, json }) => {
        const source = positionals[0] ?? '';
        const loaded = readConfig(values, cli.env);
        if (!loaded.ok) return report(cli.stderr, loaded.error);
        const { config } = loaded.value;
        // The API check comes first: it names the daemon even when its data_dir is elsewhere than this config says.
        const url = resolveUrl(values, cli.env, () => loaded);
        if (url.ok && (await answers(url.value.url))) {
          return report(
            cli.stderr,
            cliError('DAEMON_RUNNING', `mailproxy answers at ${url.value.url}: stop it before restoring`),
          );
        }
        // Loaded here, not by every command: the store and its native SQLite binding.
        const [{ DATABASE_FILE }, { restoreDatabase }] = await Promise.all([
          import('../../store/index.js'),
          import('../../store/index.js'),
        ]);
        const target = join(config.data_dir, DATABASE_FILE);
        let restored: ReturnType<typeof restoreDatabase>;
        try {
          restored = restoreDatabase({ source, target, stamp: stampOf(new Date()), force: values.force === true });
        } catch (error) {
          // A file that could not be copied or renamed; whatever was moved aside is named in the message of the rename.
          return report(
            cli.stderr,
            cliError('FILE_ERROR', `restore into ${target} failed: ${(error as Error).message}`),
          );
        }
        if (!restored.ok) {
          const code: CliErrorCode =
            restored.code === 'DATABASE_IN_USE'
              ? 'DAEMON_RUNNING'
              : restored.code === 'DATABASE_EXISTS'
                ? 'DATABASE_EXISTS'
                : 'BACKUP_INVALID';
          return report(cli.stderr, cliError(code, restored.problem));
        }
        const keyFile = join(config.data_dir, SECRET_KEY_FILE);
        const keyMissing = config.security.secret_key === '' && !existsSync(keyFile);
        if (json) {
          writeJson(cli.stdout, {
            ok: true,
            restored: restored.restored,
            from: source,
            moved_aside: restored.movedAside,
            bytes: restored.bytes,
            schema_version: restored.schemaVersion,
            supported_version: restored.supportedVersion,
            messages: restored.messages,
            secret_key_missing: keyMissing,
          });
          return EXIT_OK;
        }
        const lines = [
          `checked ${source}: integrity ok, ${bytes(restored.bytes)}, schema version ${restored.schemaVersion} (this mailproxy: ${restored.supportedVersion}), ${restored.messages} message${restored.messages === 1 ? '' : 's'}`,
          restored.movedAside.length === 0
            ? `no database was at ${target}`
            : `moved the current database aside: ${restored.movedAside.join(', ')}`,
          `restored ${source} to ${target}`,
        ];
        if (restored.schemaVersion < restored.supportedVersion)
          lines.push(`the daemon migrates it to schema version ${restored.supportedVersion} when it starts`);
        lines.push(
          keyMissing
            ? `warning: ${keyFile} is missing: copy there the secret.key of the daemon the backup came from, or stored credentials and tenant API keys will not work`
            : 'stored credentials and tenant API keys need the secret key the backup was taken with (secret.key or security.secret_key)',
        );
        lines.push('start the daemon again to serve it');
        cli.stdout.write(`${lines.join('\n')}\n`);
        return EXIT_OK;
      },
    },
  },
};
