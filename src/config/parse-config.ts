/**
 * parseConfig: TOML text + environment -> a frozen Config, or every problem at
 * once. Pure: it reads no file and no process state.
 */
import { parse as parseToml, TomlError } from 'smol-toml';
import { applyEnvOverrides } from './env-overrides.js';
import { configSchema, type Config } from './schema.js';

export type ParseConfigResult = { ok: true; config: Readonly<Config> } | { ok: false; problems: string[] };

export function parseConfig(
  tomlText: string | null,
  env: Record<string, string | undefined>,
  sourceName = 'config',
): ParseConfigResult {
  let document: Record<string, unknown> = {};
  if (tomlText !== null) {
    try {
      document = parseToml(tomlText) as Record<string, unknown>;
    } catch (error) {
      const where = error instanceof TomlError ? ` at line ${error.line}, column ${error.column}` : '';
      const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
      return { ok: false, problems: [`${sourceName}: not valid TOML${where}: ${message}`] };
    }
  }

  const { sources, unknown } = applyEnvOverrides(document, env);
  const problems = unknown.map((name) => `${name}: unknown environment variable (no such configuration key)`);

  const parsed = configSchema.safeParse(document);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const keys =
        issue.code === 'unrecognized_keys'
          ? issue.keys.map((key) => [...issue.path, key].join('.'))
          : [issue.path.join('.')];
      for (const key of keys) {
        const from = sources.get(key);
        const label = key === '' ? sourceName : key;
        const message = issue.code === 'unrecognized_keys' ? 'unknown key' : issue.message;
        problems.push(`${label}${from === undefined ? '' : ` (from ${from})`}: ${message}`);
      }
    }
  }
  if (problems.length > 0 || !parsed.success) return { ok: false, problems };
  return { ok: true, config: deepFreeze(parsed.data) };
}

function deepFreeze<T>(value: T): Readonly<T> {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
