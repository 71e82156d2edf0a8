/**
 * The first minutes with the CLI, the built command against a real
 * daemon and a real relay: the tenant a verb acts on is inferred while the
 * daemon has exactly one, and the human views print nested values as
 * `key: value` lines and every instant once. verbs.test.ts has the verbs themselves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, runCli } from '../helpers/cli-process.js';
import { api, startTestDaemon, type TestDaemon } from '../helpers/test-daemon.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

let daemon: TestDaemon;
let sink: SmtpSink;
let env: Record<string, string>;
let tenantKey: string;

beforeAll(async () => {
  [daemon, sink] = await Promise.all([startTestDaemon(), startSmtpSink()]);
  env = { MAILPROXY_URL: daemon.url, MAILPROXY_TOKEN: daemon.adminToken };
});
afterAll(async () => {
  await Promise.all([daemon.stop(), sink.stop()]);
  daemon.cleanup();
});

const cli = (args: string[], extra: Record<string, string> = {}) => runCli(args, { env: { ...env, ...extra } });
const messageOf = async (id: string): Promise<any> =>
  (await api(daemon.url, 'GET', `/messages/${id}?tenant_id=solo`, { token: daemon.adminToken })).body;
/** An instant as the human views print it. */
const shown = (epochSeconds: number): string =>
  new Date(epochSeconds * 1000)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
const occurrences = (text: string, part: string): number => text.split(part).length - 1;
/** A JSON object or list inside human output: `{"`, `[{`, `":`. */
const JSON_BLOB = /\{"|\[\{|\[\]|":/;
/** For the tests that run the CLI a dozen times: each run is a new node process. */
const MANY_RUNS = { timeout: 60_000 };

describe('mailproxy with one tenant', () => {
  it('says there is no tenant yet rather than send a request without one', async () => {
    const run = await cli(['messages', 'show', 'nothing-yet']);
    expect(run).toMatchObject({ code: 64, stdout: '' });
    expect(run.stderr).toBe('mailproxy: no tenant yet: add one with `mailproxy tenants add ID`\n');
  });

  it(
    'acts on the only tenant without --tenant: accounts, messages, suppressions, suspend and activate',
    MANY_RUNS,
    async () => {
      const added = await cli(['tenants', 'add', 'solo']);
      tenantKey = /^api key:\s+(mpk_\S+)$/m.exec(added.stdout)?.[1] ?? '';
      expect(tenantKey).toMatch(/^mpk_/);

      const account = await cli([
        'accounts',
        'add',
        'main',
        '--host',
        '127.0.0.1',
        '--port',
        String(sink.port),
        '--tls',
        'none',
        '--default',
      ]);
      expect(account).toMatchObject({ code: 0, stdout: 'account main of tenant solo created (the default account)\n' });
      const message = {
        id: 'hello-1',
        from: 'app@solo.example',
        to: ['one@example.net', 'two@example.net'],
        subject: 'Hello',
        body: 'hi',
      };
      expect(
        (await api(daemon.url, 'POST', '/add-messages', { token: tenantKey, body: { messages: [message] } })).body,
      ).toMatchObject({ queued: 1 });
      await sink.waitForMessages(1);
      await expect.poll(async () => (await messageOf('hello-1')).message.status).toBe('sent');

      const show = await cli(['messages', 'show', 'hello-1']);
      expect(show.code).toBe(0);
      expect(show.stdout).toMatch(/^tenant_id:\s+solo$/m);
      expect(show.stdout).toMatch(/^status:\s+sent$/m);
      expect((await cli(['accounts', 'show', 'main'])).stdout).toMatch(/^tenant_id:\s+solo$/m);
      expect((await cli(['suppressions', 'add', 'gone@example.net'])).stdout).toBe('gone@example.net suppressed\n');
      expect((await cli(['suppressions', 'list'])).stdout).toMatch(/^gone@example\.net\s+manual\s/m);
      expect((await cli(['suppressions', 'delete', 'gone@example.net'])).code).toBe(0);
      expect((await cli(['suspend'])).stdout).toBe('suspended tenant solo: 0 messages held; suspended now: *\n');
      expect((await cli(['activate'])).stdout).toBe(
        'activated tenant solo: 0 messages released; suspended now: nothing\n',
      );
    },
  );

  it('prints nested values as indented key: value lines, lists one item a line, never JSON', async () => {
    const message = await cli(['messages', 'show', 'hello-1']);
    expect(message.stdout).toMatch(/^rcpt_to:\n {2}- one@example\.net\n {2}- two@example\.net\nsubject:\s+Hello$/m);
    // One column for the values of a block.
    const block = message.stdout.slice(0, message.stdout.indexOf('\n\n')).split('\n');
    const columns = new Set(
      block
        .filter((line) => !line.startsWith(' ') && !line.endsWith(':'))
        .map((line) => /^\S+:\s+/.exec(line)?.[0].length),
    );
    expect(columns.size).toBe(1);

    const account = await cli(['accounts', 'show', 'main']);
    expect(account.stdout).toMatch(/^connections:\n {2}open:\s+\d+\n {2}in_use:\s+\d+\n {2}max:\s+5$/m);
    expect(account.stdout).toMatch(/^usage:\n {2}minute:\s+\d+, resets \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/m);
    for (const run of [message, account, await cli(['tenants', 'show', 'solo']), await cli(['queue', 'stats'])]) {
      expect(run.code).toBe(0);
      expect(run.stdout).not.toMatch(JSON_BLOB);
    }
  });

  it('prints each instant once: the next attempt of a deferred message and its reason, an account error', async () => {
    await cli([
      'accounts',
      'add',
      'down',
      '--host',
      '127.0.0.1',
      '--port',
      String(await closedPort()),
      '--tls',
      'none',
    ]);
    const waiting = {
      id: 'waits-1',
      account_id: 'down',
      from: 'app@solo.example',
      to: 'someone@example.net',
      subject: 'Waits',
      body: 'x',
    };
    await api(daemon.url, 'POST', '/add-messages', { token: tenantKey, body: { messages: [waiting] } });
    await expect.poll(async () => (await messageOf('waits-1')).message.status).toBe('deferred');
    const detail = await messageOf('waits-1');
    expect(detail.message.deferred_ts).toBe(detail.message.next_attempt_ts);
    expect(detail.why.reasons[0]).toMatchObject({ code: 'retry_backoff', until_ts: detail.message.next_attempt_ts });

    const show = await cli(['messages', 'show', 'waits-1']);
    const next = shown(detail.message.next_attempt_ts);
    expect(occurrences(show.stdout, next)).toBe(1);
    expect(show.stdout).toMatch(
      new RegExp(`^ {2}retry_backoff:\\s+attempt 1 was refused for now \\(.+\\); next attempt at ${next}$`, 'm'),
    );
    expect(show.stdout).not.toMatch(/^deferred_ts:/m);
    // No ISO text beside the UTC form the other instants have.
    expect(show.stdout).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/);

    const account = await cli(['accounts', 'show', 'down']);
    expect(account.stdout).toMatch(
      /^last_error:\n {2}text:\s+connect.*ECONNREFUSED.*\n {2}reply_code:\s+-\n {2}at_ts:\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/m,
    );
    expect(account.stdout).not.toMatch(JSON_BLOB);
  });

  it('prints --json exactly as the API answers', async () => {
    const asJson = await cli(['messages', 'show', 'hello-1', '--json']);
    expect(asJson.stdout).toBe(`${JSON.stringify(await messageOf('hello-1'), null, 2)}\n`);
    const accounts = await cli(['accounts', 'show', 'main', '--json']);
    expect(JSON.parse(accounts.stdout).account.connections).toEqual({
      open: expect.any(Number),
      in_use: expect.any(Number),
      max: 5,
    });
  });
});

describe('mailproxy with several tenants', () => {
  it('names the tenants and asks for --tenant; a tenant key needs none', MANY_RUNS, async () => {
    await cli(['tenants', 'add', 'other']);
    const run = await cli(['messages', 'show', 'hello-1']);
    expect(run).toMatchObject({ code: 64, stdout: '' });
    expect(run.stderr).toBe('mailproxy: several tenants: other, solo; pass --tenant\n');
    expect((await cli(['accounts', 'delete', 'main'])).stderr).toContain('several tenants: other, solo; pass --tenant');

    expect((await cli(['messages', 'show', 'hello-1', '--tenant', 'solo'])).stdout).toMatch(/^status:\s+sent$/m);
    const asTenant = await cli(['messages', 'show', 'hello-1'], { MAILPROXY_TOKEN: tenantKey });
    expect(asTenant).toMatchObject({ code: 0, stderr: '' });
    expect(asTenant.stdout).toMatch(/^tenant_id:\s+solo$/m);
  });
});
