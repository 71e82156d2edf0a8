/** `mailproxy accounts test|resume`: the connection test of an account's relay, and resuming a paused account. */
import { integerOption, stringOption } from '../args.js';
import { EXIT_FAILURE, EXIT_OK, report } from '../cli-error.js';
import type { AccountResumed, ConnectionTest } from '../answers.js';
import { tenantCall, type Verb } from '../command.js';
import { chooseTenant } from '../tenant-choice.js';
import { table, text, writeJson } from '../output.js';
import { accountPath } from './resources.js';

/** The test in lines: the verdict, each step with its reply and time, the TLS. */
function describeTest(id: string, result: ConnectionTest): string {
  const verdict = result.ok
    ? `connection test of account ${id}: ok`
    : `connection test of account ${id}: failed: ${result.reason}`;
  const steps = table(result.steps, [
    { header: 'STEP', value: (s) => s.step },
    { header: 'RESULT', value: (s) => (s.ok ? 'ok' : 'FAILED') },
    { header: 'REPLY', value: (s) => (s.text === null ? '-' : String(s.text).split(/\r?\n/).pop()) },
    { header: 'TIME', value: (s) => `${s.duration_ms} ms` },
  ]);
  const tls = result.tls;
  const tlsLine =
    tls === null
      ? 'tls  none\n'
      : `tls  ${text(tls.version)} ${text(tls.cipher)}, certificate ${tls.certificate}${tls.certificate_error === null ? '' : ` (${tls.certificate_error})`}\n`;
  return `${verdict}\n\n${steps}\n${tlsLine}`;
}

export const accountRelayVerbs: Record<string, Verb> = {
  test: {
    usage: 'ID [--tenant T] [--timeout SECONDS]',
    summary:
      "test the connection to the account's relay (EHLO, STARTTLS, AUTH, QUIT; nothing sent); exit 1 when it fails",
    options: { tenant: { type: 'string' }, timeout: { type: 'string' } },
    positionals: [1, 1],
    api: true,
    run: async (input) => {
      const id = input.positionals[0] ?? '';
      const timeout = integerOption(input.values, 'timeout', 1);
      if (!timeout.ok) return report(input.cli.stderr, timeout.error);
      const client = input.connect();
      if (!client.ok) return report(input.cli.stderr, client.error);
      const tenant = await chooseTenant(client.value, stringOption(input.values, 'tenant'));
      if (!tenant.ok) return report(input.cli.stderr, tenant.error);
      const query = {
        tenant_id: tenant.value,
        timeout_seconds: timeout.value === undefined ? undefined : String(timeout.value),
      };
      const answer = await client.value.request<ConnectionTest>('POST', `${accountPath(id)}/test`, { query });
      if (!answer.ok) return report(input.cli.stderr, answer.error);
      if (input.json) writeJson(input.cli.stdout, answer.value);
      else input.cli.stdout.write(describeTest(id, answer.value));
      return answer.value.ok === true ? EXIT_OK : EXIT_FAILURE;
    },
  },
  resume: {
    usage: 'ID [--tenant T]',
    summary: 'resume an account paused by a relay failure: its waiting mail is tried again now',
    options: { tenant: { type: 'string' } },
    positionals: [1, 1],
    api: true,
    run: (input) => {
      const id = input.positionals[0] ?? '';
      return tenantCall(
        input,
        (client, tenantId) =>
          client.request<AccountResumed>('POST', `${accountPath(id)}/resume`, { query: { tenant_id: tenantId } }),
        (body) => (body.resumed ? `account ${id} resumed\n` : `account ${id} was not paused\n`),
      );
    },
  },
};
