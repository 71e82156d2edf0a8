/**
 * `mailproxy keys rotate`: replaces the master secret key, offline (the data
 * directory's lock is held throughout, so the daemon cannot start meanwhile).
 * Every data key is rewrapped and every stored secret resealed under the new key
 * in one transaction; bodies are not touched. The steps around that transaction
 * (security/key-rotation.ts) leave a daemon that starts after a crash at any
 * point, and running the command again finishes the rotation.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  NEXT_KEY_FILE,
  PREVIOUS_KEYS_FILE,
  SECRET_KEY_FILE,
  beginConfiguredRotation,
  beginFileRotation,
  finishFileRotation,
  readKeyFile,
  type RotationStart,
} from '../../security/index.js';
import type { KeyRotationCounts } from '../../store/index.js';
import { stringOption } from '../args.js';
import { cliError, EXIT_FAILURE, EXIT_OK, report } from '../cli-error.js';
import type { Command, VerbInput } from '../command.js';
import { readConfig } from '../connection.js';
import { writeJson } from '../output.js';

interface Rotated {
  dataDir: string;
  configured: boolean;
  newKeyFile: string | undefined;
  resumed: boolean;
  /** Null: there is no database yet. */
  counts: KeyRotationCounts | null;
  /** Data keys and secrets that opened under no key held: left as they were. */
  unopened: number;
}

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`;

function humanReport(done: Rotated): string {
  const { counts } = done;
  const lines = [
    done.resumed
      ? `finished the rotation an earlier run left unfinished (${NEXT_KEY_FILE}) in ${done.dataDir}`
      : `rotated the master key of ${done.dataDir}`,
  ];
  if (counts === null) lines.push('no database yet: there was nothing to rewrap');
  else {
    const { dataKeys, secrets } = counts;
    lines.push(
      `data keys: ${dataKeys.rewrapped} rewrapped, ${dataKeys.current} already under the new key (bodies untouched)`,
      `stored secrets: ${secrets.resealed} resealed`,
      counts.tokenDigestKept
        ? "API keys' digest key: kept, sealed under the new key (tenants' API keys stay valid)"
        : "API keys' digest key: kept already, resealed",
      counts.unsubscribeLinksKept
        ? "unsubscribe links' key: kept, sealed under the new key (links in mail already sent keep working)"
        : "unsubscribe links' key: kept already, resealed",
    );
  }
  if (done.unopened > 0)
    lines.push(
      `warning: ${plural(done.unopened, 'data key or secret')} opened under no key held and were left as they were`,
    );
  if (!done.configured) {
    lines.push(`${SECRET_KEY_FILE} holds the new key now: back it up in place of the old one`);
    lines.push(
      done.unopened === 0
        ? 'the old key is gone: nothing is under it any more'
        : `${PREVIOUS_KEYS_FILE} keeps the old key, as not everything could be moved off it`,
    );
  } else {
    lines.push(
      `now set security.secret_key (or MAILPROXY_SECURITY_SECRET_KEY) to the key in ${done.newKeyFile ?? 'the new key file'}, then start the daemon`,
      done.unopened === 0
        ? 'everything is under the new key: the old one can go, and security.previous_secret_keys can be emptied'
        : 'keep the old key in security.previous_secret_keys: not everything could be moved off it',
    );
  }
  return `${lines.join('\n')}\n`;
}

function jsonReport(done: Rotated) {
  return {
    ok: done.unopened === 0,
    data_dir: done.dataDir,
    resumed: done.resumed,
    data_keys: done.counts?.dataKeys ?? null,
    secrets: done.counts?.secrets ?? null,
    token_digest_kept: done.counts?.tokenDigestKept ?? null,
    unopened: done.unopened,
    secret_key: done.configured ? 'set security.secret_key to the new key' : `${SECRET_KEY_FILE} replaced`,
  };
}

async function rotate({ values, cli, json }: VerbInput): Promise<number> {
  const loaded = readConfig(values, cli.env);
  if (!loaded.ok) return report(cli.stderr, loaded.error);
  const { config } = loaded.value;
  const dataDir = config.data_dir;
  const configured = config.security.secret_key !== '';
  const newKeyFile = stringOption(values, 'new-key-file');
  if (configured && newKeyFile === undefined)
    return report(
      cli.stderr,
      cliError(
        'USAGE',
        'security.secret_key is set in the configuration: write a new key to a file (openssl rand -base64 32) and pass --new-key-file FILE',
      ),
    );
  let given: Buffer | null = null;
  try {
    if (newKeyFile !== undefined) given = readKeyFile(newKeyFile);
  } catch (error) {
    return report(cli.stderr, cliError('FILE_ERROR', (error as Error).message));
  }
  if (!existsSync(dataDir))
    return report(cli.stderr, cliError('KEYS_REFUSED', `there is no data directory ${dataDir}: nothing to rotate`));
  // Loaded here, not by every command: the store and its native SQLite binding.
  const { DATABASE_FILE, lockDataDir, rotateStoredKeys } = await import('../../store/index.js');
  let lock: ReturnType<typeof lockDataDir>;
  try {
    lock = lockDataDir(dataDir);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'DATA_DIR_IN_USE') throw error;
    return report(cli.stderr, cliError('DAEMON_RUNNING', `${(error as Error).message} before rotating its keys`));
  }
  try {
    const sources = {
      dataDir,
      secretKey: config.security.secret_key,
      previousSecretKeys: config.security.previous_secret_keys,
    };
    const start: RotationStart =
      configured && given !== null ? beginConfiguredRotation(sources, given) : beginFileRotation(sources, given);
    if (!start.ok) return report(cli.stderr, cliError('KEYS_REFUSED', start.problem));
    const counts = rotateStoredKeys(join(dataDir, DATABASE_FILE), start.rotation, Date.now());
    const unopened = counts === null ? 0 : counts.dataKeys.failed + counts.secrets.failed;
    if (!configured) finishFileRotation(dataDir, start.masters[0] as Buffer, unopened > 0);
    const done: Rotated = { dataDir, configured, newKeyFile, resumed: start.resumed, counts, unopened };
    if (json) writeJson(cli.stdout, jsonReport(done));
    else cli.stdout.write(humanReport(done));
    return unopened === 0 ? EXIT_OK : EXIT_FAILURE;
  } catch (error) {
    // The database rolled back, or a file could not be written: run the command again to finish.
    return report(
      cli.stderr,
      cliError('FILE_ERROR', `key rotation stopped: ${(error as Error).message}; run keys rotate again to finish it`),
    );
  } finally {
    lock.release();
  }
}

export const keysCommand: Command = {
  name: 'keys',
  summary: 'The master secret key: rotate it (the daemon stopped).',
  notes: `Stop the daemon first (the command holds its data directory while it runs).
With the key in <data_dir>/secret.key, a new one is made (or taken from --new-key-file)
and replaces it. With security.secret_key set in the configuration, --new-key-file FILE
gives the new key; set security.secret_key to it afterwards. Every data key is rewrapped
and every stored secret resealed under the new key in one transaction: bodies are not
rewritten. If it stops half-way, the daemon still starts and opens everything, and
running keys rotate again finishes the rotation. Backups taken before need the old key.
`,
  verbs: {
    rotate: {
      usage: '[-c CONFIG] [--new-key-file FILE] [--json]',
      summary: 'replace the master key: data keys rewrapped, stored secrets resealed',
      options: { config: { type: 'string', short: 'c' }, 'new-key-file': { type: 'string' } },
      positionals: [0, 0],
      api: false,
      run: rotate,
    },
  },
};
