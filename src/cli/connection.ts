/**
 * Where the daemon is and which token to show it, first found wins:
 * URL: --url, MAILPROXY_URL, the config's [http] listen address;
 * token: --token, MAILPROXY_TOKEN, the config's [http] admin_token, the
 * admin-token file the daemon created in the config's data_dir.
 * The config (--config, MAILPROXY_CONFIG, or the embedded defaults) is read
 * only when a flag or variable does not already answer.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, localHttpUrl, parseListenAddress, type Config } from '../config/index.js';
import { ADMIN_TOKEN_FILE } from '../security/index.js';
import { stringOption, type OptionValues } from './args.js';
import { cliError, failed, ok, type Result } from './cli-error.js';

export type Env = Record<string, string | undefined>;

export interface Connection {
  /** Base URL without a trailing slash. */
  url: string;
  urlSource: string;
  token: string;
  /** Where the token came from, to name in an "unauthorized" message. */
  tokenSource: string;
}

/** The config file named by --config or MAILPROXY_CONFIG, or none (embedded defaults). */
export const configFile = (values: OptionValues, env: Env): string | undefined =>
  stringOption(values, 'config') ?? (env.MAILPROXY_CONFIG || undefined);

export function readConfig(
  values: OptionValues,
  env: Env,
): Result<{ config: Readonly<Config>; file: string | undefined }> {
  const file = configFile(values, env);
  const loaded = loadConfig(file, env);
  if (!loaded.ok) {
    const count = loaded.problems.length;
    return failed(
      cliError('CONFIG_INVALID', `invalid configuration (${count} problem${count === 1 ? '' : 's'}):`, loaded.problems),
    );
  }
  return ok({ config: loaded.config, file });
}

/** The daemon's URL as the CLI would reach it (for `restore`, which needs no token). */
export function resolveUrl(
  values: OptionValues,
  env: Env,
  lazyConfig: () => Result<{ config: Readonly<Config>; file: string | undefined }>,
): Result<{ url: string; source: string }> {
  const given = stringOption(values, 'url');
  if (given !== undefined) return checkedUrl(given, '--url');
  if (env.MAILPROXY_URL) return checkedUrl(env.MAILPROXY_URL, 'MAILPROXY_URL');
  const loaded = lazyConfig();
  if (!loaded.ok) return loaded;
  const listen = parseListenAddress(loaded.value.config.http.listen);
  const source = `http.listen of ${loaded.value.file ?? 'the embedded defaults'}`;
  if (listen === null) return failed(cliError('CONFIG_INVALID', `${source} is not host:port`));
  if (listen.port === 0)
    return failed(
      cliError('CONFIG_INVALID', `${source} has port 0 (the daemon picks one at start): pass --url or MAILPROXY_URL`),
    );
  return ok({ url: localHttpUrl(listen), source });
}

function checkedUrl(text: string, source: string): Result<{ url: string; source: string }> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return failed(cliError('USAGE', `${source}: not a URL: ${text}`));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return failed(cliError('USAGE', `${source}: expected an http:// or https:// URL, not ${text}`));
  return ok({ url: url.href.replace(/\/+$/, ''), source });
}

export function resolveConnection(values: OptionValues, env: Env): Result<Connection> {
  let cached: Result<{ config: Readonly<Config>; file: string | undefined }> | undefined;
  const lazyConfig = () => (cached ??= readConfig(values, env));
  const url = resolveUrl(values, env, lazyConfig);
  if (!url.ok) return url;
  const token = resolveToken(values, env, lazyConfig);
  if (!token.ok) return token;
  return ok({
    url: url.value.url,
    urlSource: url.value.source,
    token: token.value.token,
    tokenSource: token.value.source,
  });
}

function resolveToken(
  values: OptionValues,
  env: Env,
  lazyConfig: () => Result<{ config: Readonly<Config>; file: string | undefined }>,
): Result<{ token: string; source: string }> {
  const given = stringOption(values, 'token');
  if (given !== undefined) return ok({ token: given, source: '--token' });
  if (env.MAILPROXY_TOKEN) return ok({ token: env.MAILPROXY_TOKEN, source: 'MAILPROXY_TOKEN' });
  const loaded = lazyConfig();
  if (!loaded.ok) return loaded;
  const { config } = loaded.value;
  if (config.http.admin_token !== '')
    return ok({ token: config.http.admin_token, source: 'http.admin_token of the configuration' });
  const file = join(config.data_dir, ADMIN_TOKEN_FILE);
  try {
    const token = readFileSync(file, 'utf8').trim();
    if (token !== '') return ok({ token, source: file });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'ENOENT')
      return failed(
        cliError(
          'NO_TOKEN',
          `cannot read the admin token in ${file} (${code ?? String(error)}): run as the daemon's user, or pass --token or MAILPROXY_TOKEN`,
        ),
      );
  }
  return failed(
    cliError(
      'NO_TOKEN',
      `no admin token: pass --token or MAILPROXY_TOKEN, set http.admin_token, or point --config at the daemon's configuration (its data_dir holds admin-token; looked in ${file})`,
    ),
  );
}
