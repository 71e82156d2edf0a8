/**
 * Argument parsing for the verbs, on node's own `util.parseArgs` (strict: an
 * unknown option is a usage error, not silently ignored). Every verb that talks
 * to the daemon takes the connection options below.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { cliError, failed, ok, type Result } from './cli-error.js';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;
export type OptionValues = Record<string, string | boolean | undefined>;

export interface ParsedArgs {
  values: OptionValues;
  positionals: string[];
}

/** Where the daemon is and how to authenticate (connection.ts resolves them). */
export const CONNECTION_OPTIONS: OptionSpec = {
  url: { type: 'string' },
  token: { type: 'string' },
  config: { type: 'string', short: 'c' },
};

export const OUTPUT_OPTIONS: OptionSpec = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

export function parseVerbArgs(
  args: string[],
  options: OptionSpec,
  positionals: readonly [number, number],
): Result<ParsedArgs> {
  let parsed: { values: unknown; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: { ...OUTPUT_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    // parseArgs says which option and why ("Unknown option '--x'", "Option '--tenant <value>' argument missing").
    return failed(cliError('USAGE', (error as Error).message));
  }
  const values = parsed.values as OptionValues;
  if (values.help === true) return ok({ values, positionals: parsed.positionals });
  const [min, max] = positionals;
  if (parsed.positionals.length < min)
    return failed(cliError('USAGE', `missing argument${min - parsed.positionals.length === 1 ? '' : 's'}`));
  if (parsed.positionals.length > max)
    return failed(cliError('USAGE', `unexpected argument: ${parsed.positionals[max]}`));
  return ok({ values, positionals: parsed.positionals });
}

export const stringOption = (values: OptionValues, name: string): string | undefined => {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
};

/** An option that must be a whole number (a limit, a number of seconds). */
export function integerOption(values: OptionValues, name: string, min = 0): Result<number | undefined> {
  const text = stringOption(values, name);
  if (text === undefined) return ok(undefined);
  const value = Number(text);
  if (!/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min) {
    return failed(
      cliError(
        'USAGE',
        `--${name} must be a whole number${min > 0 ? ` of at least ${min}` : ''}, not ${JSON.stringify(text)}`,
      ),
    );
  }
  return ok(value);
}
