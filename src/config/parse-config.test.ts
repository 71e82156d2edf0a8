import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { listEnvKeys } from './env-overrides.js';
import { parseConfig } from './parse-config.js';
import { redactConfig } from './redact.js';
import { configSchema } from './schema.js';
import { defaultSessionProcesses } from './session-processes.js';

const problemsOf = (toml: string | null, env: Record<string, string> = {}): string[] => {
  const result = parseConfig(toml, env, 'test.toml');
  if (result.ok) throw new Error('expected the config to be invalid');
  return result.problems;
};

describe('parseConfig', () => {
  it('runs on embedded defaults with no file and no environment', () => {
    const result = parseConfig(null, {});
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.data_dir).toBe('./data');
    expect(result.config.http.listen).toBe('127.0.0.1:8000');
    expect(result.config.smtp.listen).toBe('127.0.0.1:2525');
    expect(result.config.nats.url).toBe('');
    expect(Object.isFrozen(result.config.http)).toBe(true);
  });

  it('lets an environment variable win over the file', () => {
    const result = parseConfig('[http]\nlisten = "127.0.0.1:9000"\nauth_max_failures = 4\n', {
      MAILPROXY_HTTP_LISTEN: '0.0.0.0:9100',
      MAILPROXY_HTTP_AUTH_MAX_FAILURES: '7',
      MAILPROXY_DATA_DIR: '/var/lib/mailproxy',
    });
    expect(result.ok && result.config.http).toMatchObject({ listen: '0.0.0.0:9100', auth_max_failures: 7 });
    expect(result.ok && result.config.data_dir).toBe('/var/lib/mailproxy');
  });

  it('takes the previous secret keys from a comma-separated variable, and shows none of them', () => {
    const keys = ['a', 'b'].map((fill) => Buffer.alloc(32, fill).toString('base64'));
    const result = parseConfig(null, { MAILPROXY_SECURITY_PREVIOUS_SECRET_KEYS: keys.join(',') });
    expect(result.ok && result.config.security.previous_secret_keys).toEqual(keys);
    expect(result.ok && redactConfig(result.config).security).toEqual({
      secret_key: '',
      previous_secret_keys: ['[redacted]', '[redacted]'],
    });
    expect(problemsOf('[security]\nprevious_secret_keys = ["c2hvcnQ="]\n')).toEqual([
      expect.stringMatching(/^security\.previous_secret_keys\.0: expected 32 random bytes/),
    ]);
  });

  it.each([
    ['TOML syntax', 'data_dir = \n', /test\.toml: not valid TOML at line 1/],
    ['unknown top-level key', 'dta_dir = "x"\n', /^dta_dir: unknown key$/],
    ['unknown section', '[htp]\nlisten = "x"\n', /^htp: unknown key$/],
    ['unknown key in a section', '[http]\nlsten = "127.0.0.1:1"\n', /^http\.lsten: unknown key$/],
    ['wrong type', '[http]\nmax_body_bytes = "big"\n', /^http\.max_body_bytes: .*number/],
    ['bad listen address', '[smtp]\nlisten = "localhost"\n', /^smtp\.listen: expected host:port/],
    ['port out of range', '[http]\nlisten = "127.0.0.1:70000"\n', /^http\.listen: expected host:port/],
    ['negative number', 'shutdown_timeout_seconds = -1\n', /^shutdown_timeout_seconds: /],
    ['bad enum', '[log]\nlevel = "verbose"\n', /^log\.level: /],
    ['short admin token', '[http]\nadmin_token = "short"\n', /^http\.admin_token: .*16 characters/],
    ['short metrics token', '[http]\nmetrics_token = "short"\n', /^http\.metrics_token: .*16 characters/],
    [
      'metrics token equal to the admin token',
      '[http]\nadmin_token = "same-token-0123456789"\nmetrics_token = "same-token-0123456789"\n',
      /^http\.metrics_token: must differ from admin_token/,
    ],
    [
      'bad secret key',
      '[security]\nsecret_key = "bm90IDMyIGJ5dGVz"\n',
      /^security\.secret_key: expected 32 random bytes/,
    ],
    ['bad subject prefix', '[nats]\nsubject_prefix = "a..b"\n', /^nats\.subject_prefix: /],
    ['section given as a value', 'http = 5\n', /^http: /],
  ])('names the key on %s', (_kind, toml, pattern) => {
    const problems = problemsOf(toml);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(pattern);
  });

  it('takes the metrics token from MAILPROXY_HTTP_METRICS_TOKEN, none by default', () => {
    expect(
      parseConfig(null, {}).ok &&
        (parseConfig(null, {}) as { config: { http: { metrics_token: string } } }).config.http.metrics_token,
    ).toBe('');
    const result = parseConfig('[http]\nmetrics_token = "from-the-file-0123456789"\n', {
      MAILPROXY_HTTP_METRICS_TOKEN: 'prometheus-scrape-0123456789',
    });
    expect(result.ok && result.config.http.metrics_token).toBe('prometheus-scrape-0123456789');
  });

  it('lists every problem at once', () => {
    const problems = problemsOf('[http]\nlisten = "nope"\nmax_body_bytes = 0\n[log]\nlevel = 3\n');
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual([
      'http.listen',
      'http.max_body_bytes',
      'log.level',
    ]);
  });

  it('names the environment variable a bad value came from', () => {
    expect(problemsOf(null, { MAILPROXY_HTTP_MAX_BODY_BYTES: 'lots' })).toEqual([
      expect.stringMatching(/^http\.max_body_bytes \(from MAILPROXY_HTTP_MAX_BODY_BYTES\): /),
    ]);
  });

  it('rejects an unknown MAILPROXY_ variable (a typo would otherwise be ignored)', () => {
    expect(problemsOf(null, { MAILPROXY_HTTP_LISTN: '127.0.0.1:1' })).toEqual([
      'MAILPROXY_HTTP_LISTN: unknown environment variable (no such configuration key)',
    ]);
    expect(parseConfig(null, { MAILPROXY_CONFIG: '/etc/mailproxy.toml' }).ok).toBe(true);
  });
});

describe('[fleet]', () => {
  it('is off by default: a single node', () => {
    const result = parseConfig(null, {});
    expect(result.ok && result.config.fleet.enabled).toBe(false);
  });

  it('needs a node id and the cluster to be on', () => {
    expect(problemsOf('[fleet]\nenabled = true\n')).toEqual([
      'fleet.node_id: a fleet node needs a node_id, unique in the fleet',
      'fleet.enabled: fleet mode needs nats.url (the cluster)',
    ]);
    expect(parseConfig('[fleet]\nenabled = true\nnode_id = "n1"\n[nats]\nurl = "nats://127.0.0.1:4222"\n', {}).ok).toBe(
      true,
    );
  });

  it('refuses a node timeout that one late heartbeat would trip', () => {
    expect(problemsOf('[fleet]\nheartbeat_seconds = 5\nnode_timeout_seconds = 6\n')).toEqual([
      'fleet.node_timeout_seconds: at least twice heartbeat_seconds, or one late heartbeat reads as a lost node',
    ]);
  });
});

/** Defaults that follow the machine: the example shows them for a small one (2 cores). */
const MACHINE_DEPENDENT: Record<string, unknown> = { 'smtp.session_processes': defaultSessionProcesses(2) };

describe('config.example.toml', () => {
  const text = readFileSync(new URL('../../config.example.toml', import.meta.url), 'utf8');

  it('parses', () => {
    const result = parseConfig(text, {});
    expect(result.ok ? [] : result.problems).toEqual([]);
  });

  it('documents every key with its default value', () => {
    const document = parseToml(text) as Record<string, Record<string, unknown>>;
    const defaults = configSchema.parse({}) as unknown as Record<string, Record<string, unknown>>;
    for (const { path } of listEnvKeys()) {
      const [section, key] = path;
      const shown = key === undefined ? document[section] : document[section]?.[key];
      const expected =
        MACHINE_DEPENDENT[path.join('.')] ?? (key === undefined ? defaults[section] : defaults[section]?.[key]);
      expect(shown, `${path.join('.')} is missing from config.example.toml`).not.toBeUndefined();
      expect(shown, `${path.join('.')} shows a value other than its default`).toEqual(expected);
    }
  });
});
