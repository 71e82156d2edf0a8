/** Reads the config file (when given) and the process environment, then parses. */
import { readFileSync } from 'node:fs';
import { parseConfig, type ParseConfigResult } from './parse-config.js';

export function loadConfig(file: string | undefined, env: Record<string, string | undefined>): ParseConfigResult {
  if (file === undefined) return parseConfig(null, env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason = error instanceof Error && 'code' in error ? String(error.code) : String(error);
    return { ok: false, problems: [`${file}: cannot read the config file (${reason})`] };
  }
  return parseConfig(text, env, file);
}
