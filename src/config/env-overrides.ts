/**
 * `MAILPROXY_<SECTION>_<KEY>` environment overrides, derived from the schema so
 * that every key has exactly one variable. Values are coerced to the key's type;
 * a value that does not fit is left as text for the schema to reject by name.
 */
import type { z } from 'zod';
import { configSchema } from './schema.js';

export const ENV_PREFIX = 'MAILPROXY_';
/** Variables of ours that are not configuration keys (the config file; where the CLI finds the daemon). */
export const RESERVED_ENV = new Set(['MAILPROXY_CONFIG', 'MAILPROXY_URL', 'MAILPROXY_TOKEN']);

export interface EnvKey {
  /** Path in the config object, e.g. ['http', 'admin_token']. */
  path: [string] | [string, string];
  variable: string;
  kind: string;
}

type AnySchema = z.core.$ZodType;

/** The type under default/prefault/optional wrappers: 'string', 'number', 'boolean', 'enum', 'object', ... */
export function baseKind(schema: AnySchema): string {
  let current = schema;
  for (;;) {
    const def = current._zod.def as { type: string; innerType?: AnySchema };
    if (def.innerType === undefined) return def.type;
    current = def.innerType;
  }
}

function objectShape(schema: AnySchema): Record<string, AnySchema> | null {
  let current = schema;
  for (;;) {
    const def = current._zod.def as { type: string; innerType?: AnySchema; shape?: Record<string, AnySchema> };
    if (def.type === 'object') return def.shape ?? null;
    if (def.innerType === undefined) return null;
    current = def.innerType;
  }
}

/** Every configuration key with its environment variable, in schema order. */
export function listEnvKeys(): EnvKey[] {
  const keys: EnvKey[] = [];
  for (const [name, field] of Object.entries(configSchema.shape)) {
    const shape = objectShape(field);
    if (shape === null) {
      keys.push({ path: [name], variable: `${ENV_PREFIX}${name.toUpperCase()}`, kind: baseKind(field) });
      continue;
    }
    for (const [key, inner] of Object.entries(shape)) {
      keys.push({
        path: [name, key],
        variable: `${ENV_PREFIX}${name.toUpperCase()}_${key.toUpperCase()}`,
        kind: baseKind(inner),
      });
    }
  }
  return keys;
}

export function coerceEnvValue(kind: string, raw: string): unknown {
  if (kind === 'number') {
    const trimmed = raw.trim();
    return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : raw;
  }
  if (kind === 'boolean') {
    const lowered = raw.trim().toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(lowered)) return true;
    if (['false', '0', 'no', 'off'].includes(lowered)) return false;
    return raw;
  }
  if (kind === 'array') {
    // JSON (`[60, 300]`) or a comma-separated list (`60,300`) of numbers.
    const trimmed = raw.trim();
    if (trimmed.startsWith('[')) {
      try {
        return JSON.parse(trimmed) as unknown;
      } catch {
        return raw;
      }
    }
    return trimmed.split(',').map((item) => coerceEnvValue('number', item));
  }
  return raw;
}

export interface EnvOverrideResult {
  /** Each applied override, path to variable name, so problems can name their source. */
  sources: Map<string, string>;
  unknown: string[];
}

/** Writes the overrides into `target` (a parsed TOML document) and reports what it did. */
export function applyEnvOverrides(
  target: Record<string, unknown>,
  env: Record<string, string | undefined>,
): EnvOverrideResult {
  const sources = new Map<string, string>();
  const known = new Set<string>();
  for (const key of listEnvKeys()) {
    known.add(key.variable);
    const raw = env[key.variable];
    if (raw === undefined) continue;
    const value = coerceEnvValue(key.kind, raw);
    if (key.path.length === 1) {
      target[key.path[0]] = value;
    } else {
      const [section, name] = key.path;
      const existing = target[section];
      const table =
        typeof existing === 'object' && existing !== null && !Array.isArray(existing)
          ? (existing as Record<string, unknown>)
          : {};
      table[name] = value;
      target[section] = table;
    }
    sources.set(key.path.join('.'), key.variable);
  }
  const unknown = Object.keys(env).filter(
    (name) => name.startsWith(ENV_PREFIX) && !known.has(name) && !RESERVED_ENV.has(name),
  );
  return { sources, unknown };
}
