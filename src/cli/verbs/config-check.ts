/**
 * `mailproxy config check`: validates the configuration exactly as `serve`
 * would (file + MAILPROXY_* variables) and prints the effective result with
 * every secret redacted, so it can be pasted into a ticket.
 */
import { listEnvKeys, redactConfig } from '../../config/index.js';
import { EXIT_OK, report } from '../cli-error.js';
import type { Command } from '../command.js';
import { readConfig } from '../connection.js';
import { writeJson } from '../output.js';

/** TOML-like: top-level keys, then one `[section]` each; values as JSON (strings, numbers and lists read the same in TOML). */
function render(config: Record<string, unknown>): string {
  const scalar = Object.entries(config).filter(
    ([, value]) => typeof value !== 'object' || value === null || Array.isArray(value),
  );
  const sections = Object.entries(config).filter(
    ([, value]) => typeof value === 'object' && value !== null && !Array.isArray(value),
  );
  let out = scalar.map(([key, value]) => `${key} = ${JSON.stringify(value)}\n`).join('');
  for (const [name, section] of sections) {
    out += `\n[${name}]\n`;
    out += Object.entries(section as Record<string, unknown>)
      .map(([key, value]) => `${key} = ${JSON.stringify(value)}\n`)
      .join('');
  }
  return out;
}

export const configCommand: Command = {
  name: 'config',
  summary: 'The configuration the daemon would run with.',
  verbs: {
    check: {
      usage: '[-c FILE] [--json]',
      summary: 'validate (exit 78 naming every problem) and print the effective configuration, secrets redacted',
      options: { config: { type: 'string', short: 'c' } },
      positionals: [0, 0],
      api: false,
      run: async ({ values, cli, json }) => {
        const loaded = readConfig(values, cli.env);
        if (!loaded.ok) return report(cli.stderr, loaded.error);
        const redacted = redactConfig(loaded.value.config);
        const overrides = listEnvKeys()
          .filter((key) => cli.env[key.variable] !== undefined)
          .map((key) => key.variable);
        if (json) {
          writeJson(cli.stdout, {
            ok: true,
            file: loaded.value.file ?? null,
            environment: overrides,
            config: redacted,
          });
          return EXIT_OK;
        }
        cli.stdout.write(
          `# configuration ok: ${loaded.value.file ?? 'embedded defaults'}${overrides.length === 0 ? '' : `, with ${overrides.join(', ')} from the environment`}\n`,
        );
        cli.stdout.write('# secrets are shown as [redacted]\n\n');
        cli.stdout.write(render(redacted));
        return EXIT_OK;
      },
    },
  },
};
