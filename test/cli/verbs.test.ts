import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, runCli } from '../helpers/cli-process.js';
import { api, startTestDaemon, type TestDaemon } from '../helpers/test-daemon.js';

let daemon: TestDaemon;
let env: Record<string, string>;

beforeAll(async () => {
  daemon = await startTestDaemon();
  env = { MAILPROXY_URL: daemon.url, MAILPROXY_TOKEN: daemon.adminToken };
});
afterAll(async () => {
  await daemon.stop();
  daemon.cleanup();
});

const cli = (args: string[], extra: Record<string, string> = {}, input?: string) =>
  runCli(args, { env: { ...env, ...extra }, ...(input === undefined ? {} : { input }) });
const json = (text: string): any => JSON.parse(text);

// Each test starts five to fifteen CLI processes, and each is a Node start (about 0.9 s of CPU): in a
// fresh-clone CI run on a loaded 2-core machine one took up to 4 s, and tests of ten timed out at 30 s.
// A command that hangs still fails them.
describe('mailproxy admin verbs against a running daemon', { timeout: 120_000 }, () => {
  it('adds, lists, shows and deletes tenants, as a table and as JSON, and rotates a key that works once printed', async () => {
    const added = await cli([
      'tenants',
      'add',
      'cli-t1',
      '--name',
      'CLI One',
      '--client-base-url',
      'http://127.0.0.1:9/hook',
    ]);
    expect(added).toMatchObject({ code: 0, stderr: '' });
    const firstKey = /^api key:\s+(mpk_\S+)$/m.exec(added.stdout)?.[1];
    expect(firstKey).toBeDefined();

    const list = await cli(['tenants', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+ACTIVE\s+CLIENT URL/);
    expect(list.stdout).toMatch(/^cli-t1\s+CLI One\s+yes\s+http:\/\/127\.0\.0\.1:9\/hook/m);
    expect(json((await cli(['tenants', 'list', '--json'])).stdout).tenants.map((t: any) => t.id)).toContain('cli-t1');

    const show = await cli(['tenants', 'show', 'cli-t1']);
    expect(show.stdout).toMatch(/^client_base_url:\s+http:\/\/127\.0\.0\.1:9\/hook$/m);
    expect(show.stdout).not.toContain(firstKey);

    const rotated = await cli(['token', 'rotate', 'cli-t1', '--json']);
    expect(rotated.code).toBe(0);
    const newKey = json(rotated.stdout).api_key as string;
    expect(newKey).toMatch(/^mpk_/);
    expect((await api(daemon.url, 'GET', '/status', { token: newKey })).status).toBe(200);
    expect((await api(daemon.url, 'GET', '/status', { token: firstKey as string })).status).toBe(401);
    const human = await cli(['token', 'rotate', 'cli-t1']);
    expect(human.stdout).toContain('the old one no longer works');

    // A tenant key is not the admin token: the CLI says so, exit 77.
    const forbidden = await cli(['tenants', 'list'], { MAILPROXY_TOKEN: /^(mpk_\S+)$/m.exec(human.stdout)?.[1] ?? '' });
    expect(forbidden.code).toBe(77);
    expect(forbidden.stderr).toContain('FORBIDDEN');

    expect(await cli(['tenants', 'delete', 'cli-t1'])).toMatchObject({ code: 0, stdout: 'tenant cli-t1 deleted\n' });
    const gone = await cli(['tenants', 'show', 'cli-t1']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('NOT_FOUND: tenant not found');
  });

  it('manages accounts, reading the password from stdin and never printing it', async () => {
    await cli(['tenants', 'add', 'cli-t2']);
    const added = await cli(
      [
        'accounts',
        'add',
        'relay1',
        '--tenant',
        'cli-t2',
        '--host',
        '127.0.0.1',
        '--port',
        '2599',
        '--user',
        'u1',
        '--password-file',
        '-',
        '--limit-per-minute',
        '30',
        '--destination-limits',
        '[{"domains":["gmail.com"],"limit_per_minute":10}]',
        '--default',
      ],
      {},
      'pw-never-shown\n',
    );
    expect(added).toMatchObject({
      code: 0,
      stdout: 'account relay1 of tenant cli-t2 created (the default account)\n',
      stderr: '',
    });

    const list = await cli(['accounts', 'list', '--tenant', 'cli-t2']);
    expect(list.stdout).toMatch(
      /^cli-t2\s+relay1\s+127\.0\.0\.1:2599\s+starttls\s+yes\s+active\s+0\s+30\/min -\/h -\/day\s+no\s+-$/m,
    );
    const show = await cli(['accounts', 'show', 'relay1', '--tenant', 'cli-t2']);
    expect(show.stdout).toMatch(/^has_password:\s+yes$/m);
    expect(show.stdout).toMatch(/^usage:\n {2}minute:\s+0 of 30, resets /m);
    const asJson = json((await cli(['accounts', 'show', 'relay1', '--tenant', 'cli-t2', '--json'])).stdout);
    expect(asJson.account).toMatchObject({ id: 'relay1', user: 'u1', has_password: true });
    expect(asJson.account.destination_limits).toEqual([
      {
        name: 'gmail.com',
        domains: ['gmail.com'],
        limit_per_minute: 10,
        limit_per_hour: null,
        limit_per_day: null,
        max_connections: null,
      },
    ]);
    for (const run of [list, show]) expect(run.stdout).not.toContain('pw-never-shown');

    const invalid = await cli(['accounts', 'add', 'relay2', '--tenant', 'cli-t2', '--host', 'not a host']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain(
      'VALIDATION_FAILED: invalid request body\n  - host: must be a hostname or an IP address',
    );

    expect((await cli(['accounts', 'delete', 'relay1', '--tenant', 'cli-t2'])).code).toBe(0);
    expect(json((await cli(['accounts', 'list', '--tenant', 'cli-t2', '--json'])).stdout).accounts).toEqual([]);
  });

  it('prints the warnings of a change that leaves a tenant without a default account, on stderr, and --no-default unmarks one', async () => {
    await cli(['tenants', 'add', 'cli-def']);
    const add = (id: string, ...flags: string[]) =>
      cli(['accounts', 'add', id, '--tenant', 'cli-def', '--host', '127.0.0.1', '--port', '2599', ...flags]);
    expect(await add('main')).toMatchObject({
      code: 0,
      stdout: 'account main of tenant cli-def created (the default account)\n',
      stderr: '',
    });
    expect(await add('spare')).toMatchObject({
      code: 0,
      stdout: 'account spare of tenant cli-def created\n',
      stderr: '',
    });
    expect((await cli(['accounts', 'list', '--tenant', 'cli-def'])).stdout).toMatch(
      /^cli-def\s+main\s+\S+\s+\S+\s+yes\s/m,
    );

    const unmarked = await add('main', '--no-default');
    expect(unmarked).toMatchObject({ code: 0, stdout: 'account main of tenant cli-def updated\n' });
    expect(unmarked.stderr).toBe(
      'warning: NO_DEFAULT_ACCOUNT: tenant cli-def has no default account: messages that name no account (account_id, or the SMTP user <tenant>/<account>) ' +
        'are refused; its accounts: main, spare; save one with is_default true\n',
    );
    expect((await cli(['accounts', 'list', '--tenant', 'cli-def'])).stdout).toMatch(
      /^cli-def\s+main\s+\S+\s+\S+\s+no\s/m,
    );
    expect((await add('x', '--default', '--no-default')).code).toBe(64);

    expect((await add('spare', '--default')).stderr).toBe('');
    const deleted = await cli(['accounts', 'delete', 'spare', '--tenant', 'cli-def']);
    expect(deleted).toMatchObject({ code: 0, stdout: 'account spare deleted\n' });
    expect(deleted.stderr).toMatch(
      /^warning: NO_DEFAULT_ACCOUNT: tenant cli-def has no default account: .* its accounts: main; /,
    );
  });

  it('manages a PEC account: the flag and the mailbox from flags, its password from a file, shown but never printed', async () => {
    await cli(['tenants', 'add', 'cli-pec']);
    const imapPasswordFile = join(daemon.dataDir, 'imap-password');
    writeFileSync(imapPasswordFile, 'imap-pw-never-shown\n');
    const add = (...args: string[]) =>
      cli(
        [
          'accounts',
          'add',
          'pec1',
          '--tenant',
          'cli-pec',
          '--host',
          'smtps.pec.example',
          '--user',
          'me@pec.example',
          ...args,
        ],
        {},
        'relay-pw-never-shown\n',
      );
    const added = await add(
      '--password-file',
      '-',
      '--pec',
      '--imap-host',
      'imaps.pec.example',
      '--imap-tls',
      'starttls',
      '--imap-port',
      '1143',
      '--imap-user',
      'box@pec.example',
      '--imap-password-file',
      imapPasswordFile,
      '--imap-folder',
      'Ricevute PEC',
    );
    expect(added).toMatchObject({ code: 0, stdout: 'account pec1 of tenant cli-pec created (the default account)\n' });

    const list = await cli(['accounts', 'list', '--tenant', 'cli-pec']);
    expect(list.stdout.split('\n')[0]).toMatch(/\s+PEC\s+MAILBOX$/);
    expect(list.stdout).toMatch(/^cli-pec\s+pec1\s.*\syes\s+imaps\.pec\.example:1143 Ricevute PEC$/m);
    const show = await cli(['accounts', 'show', 'pec1', '--tenant', 'cli-pec']);
    for (const line of [
      /^is_pec:\s+yes$/m,
      /^imap_host:\s+imaps\.pec\.example$/m,
      /^imap_port:\s+1143$/m,
      /^imap_tls_mode:\s+starttls$/m,
      /^imap_user:\s+box@pec\.example$/m,
      /^has_imap_password:\s+yes$/m,
      /^imap_folder:\s+Ricevute PEC$/m,
    ]) {
      expect(show.stdout).toMatch(line);
    }
    for (const run of [added, list, show]) expect(run.stdout + run.stderr).not.toMatch(/pw-never-shown/);
    expect(
      json((await cli(['accounts', 'show', 'pec1', '--tenant', 'cli-pec', '--json'])).stdout).account,
    ).toMatchObject({
      is_pec: true,
      has_imap_password: true,
      has_password: true,
    });

    // --no-pec clears the flag and keeps the mailbox.
    expect((await add('--no-pec')).code).toBe(0);
    expect(
      json((await cli(['accounts', 'show', 'pec1', '--tenant', 'cli-pec', '--json'])).stdout).account,
    ).toMatchObject({
      is_pec: false,
      imap_host: 'imaps.pec.example',
      has_imap_password: true,
    });

    const both = await add('--pec', '--no-pec');
    expect(both.code).toBe(64);
    expect(both.stderr).toContain('--pec and --no-pec contradict each other');
    const twoStdin = await add('--password-file', '-', '--imap-password-file', '-');
    expect(twoStdin.code).toBe(64);
    expect(twoStdin.stderr).toContain('only one of --password-file and --imap-password-file can read stdin');
    const badPort = await add('--imap-port', 'ninety');
    expect(badPort.stderr).toContain('--imap-port must be a whole number');
    const refused = await cli([
      'accounts',
      'add',
      'pec2',
      '--tenant',
      'cli-pec',
      '--host',
      'smtps.pec.example',
      '--pec',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'VALIDATION_FAILED: invalid request body\n  - imap_host: a PEC account needs imap_host',
    );
  });

  it('lists and shows messages with why they wait, suspends and activates, and shows the queue', async () => {
    await cli(['tenants', 'add', 'cli-t3']);
    await cli([
      'accounts',
      'add',
      'main',
      '--tenant',
      'cli-t3',
      '--host',
      '127.0.0.1',
      '--port',
      String(await closedPort()),
      '--default',
    ]);
    expect((await cli(['suspend', '--tenant', 'cli-t3'])).stdout).toBe(
      'suspended tenant cli-t3: 0 messages held; suspended now: *\n',
    );
    const submitted = await api(daemon.url, 'POST', '/add-messages', {
      token: daemon.adminToken,
      body: {
        messages: [1, 2, 3].map((n) => ({
          id: `cli-m${n}`,
          tenant_id: 'cli-t3',
          from: 'app@example.com',
          to: `user${n}@example.org`,
          subject: `invoice ${n}`,
          body: 'hi',
          batch_code: n === 3 ? 'b3' : undefined,
        })),
      },
    });
    expect(submitted.body).toMatchObject({ queued: 3 });

    const list = await cli(['messages', 'list', '--tenant', 'cli-t3']);
    expect(list.stdout.split('\n')[0]).toMatch(
      /^TENANT\s+ID\s+STATUS\s+PRI\s+ACCOUNT\s+TO\s+SUBJECT\s+CREATED\s+TRIES$/,
    );
    expect(list.stdout).toMatch(/^cli-t3\s+cli-m2\s+suspended\s+2\s+main\s+user2@example\.org\s+invoice 2\s/m);
    const page = json((await cli(['messages', 'list', '--tenant', 'cli-t3', '--limit', '2', '--json'])).stdout);
    expect(page.messages).toHaveLength(2);
    const rest = await cli([
      'messages',
      'list',
      '--tenant',
      'cli-t3',
      '--cursor',
      page.next_cursor,
      '--recipient',
      'user1@example.org',
    ]);
    expect(rest.stdout.trim().split('\n')).toHaveLength(2);
    expect(
      json((await cli(['messages', 'list', '--tenant', 'cli-t3', '--batch', 'b3', '--json'])).stdout).messages.map(
        (m: any) => m.id,
      ),
    ).toEqual(['cli-m3']);

    const show = await cli(['messages', 'show', 'cli-m1', '--tenant', 'cli-t3']);
    expect(show.stdout).toMatch(/^status:\s+suspended$/m);
    expect(show.stdout).toMatch(/^why it waits:\n {2}tenant_suspended: /m);
    expect(show.stdout).toMatch(/^events:\n {2}AT\s+EVENT/m);
    expect(
      json((await cli(['messages', 'show', 'cli-m1', '--tenant', 'cli-t3', '--json'])).stdout).why.reasons[0].code,
    ).toBe('tenant_suspended');

    const stats = await cli(['queue', 'stats', '--tenant', 'cli-t3']);
    expect(stats.stdout).toMatch(/^waiting:\s+3$/m);
    expect(stats.stdout).toMatch(/^by status:\n(?: {2}\w+:\s+\d+\n)* {2}suspended:\s+3$/m);
    expect(stats.stdout).toMatch(/^dispatcher:\s+running$/m);
    expect(json((await cli(['queue', 'stats', '--json'])).stdout).queue.waiting).toBeGreaterThanOrEqual(3);

    expect((await cli(['activate', '--tenant', 'cli-t3'])).stdout).toBe(
      'activated tenant cli-t3: 3 messages released; suspended now: nothing\n',
    );
    const batch = await cli(['suspend', '--tenant', 'cli-t3', '--batch', 'b3', '--json']);
    expect(json(batch.stdout)).toMatchObject({ ok: true, batch_code: 'b3', suspensions: ['b3'] });
  });

  it('adds, lists and deletes suppressions', async () => {
    await cli(['tenants', 'add', 'cli-t4']);
    expect(
      (await cli(['suppressions', 'add', 'Gone@Example.org', '--tenant', 'cli-t4', '--reason', 'asked to stop']))
        .stdout,
    ).toBe('gone@example.org suppressed\n');
    const list = await cli(['suppressions', 'list', '--tenant', 'cli-t4']);
    expect(list.stdout).toMatch(
      /^ADDRESS\s+SOURCE\s+REASON\s+CREATED\s+EXPIRES\ngone@example\.org\s+manual\s+asked to stop\s+\S+ \S+\s+never\n$/,
    );
    expect((await cli(['suppressions', 'delete', 'gone@example.org', '--tenant', 'cli-t4'])).code).toBe(0);
    expect(json((await cli(['suppressions', 'list', '--tenant', 'cli-t4', '--json'])).stdout).suppressions).toEqual([]);
    // Several tenants by now: the CLI names them rather than guess.
    const missing = await cli(['suppressions', 'list']);
    expect(missing).toMatchObject({ code: 64 });
    expect(missing.stderr).toMatch(/^mailproxy: several tenants: (?:[\w-]+, )+[\w-]+; pass --tenant\n$/);
    expect(missing.stderr).toContain('cli-t4');
  });

  it('finds the URL and the token through the config file: http.listen and the admin-token file of data_dir', async () => {
    const config = join(daemon.dataDir, 'cli.toml');
    writeFileSync(config, `data_dir = "${daemon.dataDir}"\n[http]\nlisten = "127.0.0.1:${new URL(daemon.url).port}"\n`);
    const list = await runCli(['tenants', 'list', '--json', '--config', config]);
    expect(list.code).toBe(0);
    expect(json(list.stdout)).toHaveProperty('tenants');
    expect((await runCli(['queue', 'stats'], { env: { MAILPROXY_CONFIG: config } })).code).toBe(0);
  });

  it('says clearly when nothing answers, when the token is refused, and when the usage is wrong', async () => {
    const port = await closedPort();
    const down = await cli(['tenants', 'list'], { MAILPROXY_URL: `http://127.0.0.1:${port}` });
    expect(down.code).toBe(69);
    expect(down.stderr).toBe(
      `mailproxy: cannot reach mailproxy at http://127.0.0.1:${port}: is it running? (ECONNREFUSED)\n`,
    );

    const refused = await cli(['tenants', 'list', '--token', 'not-the-admin-token']);
    expect(refused.code).toBe(77);
    expect(refused.stderr).toContain(
      `mailproxy at ${daemon.url} refused the token from --token (UNAUTHORIZED: invalid credentials)`,
    );
    expect(refused.stderr).not.toContain('at file://');

    const noToken = await runCli(['tenants', 'list', '--url', daemon.url], {
      env: { MAILPROXY_DATA_DIR: join(daemon.dataDir, 'nothing-here') },
    });
    expect(noToken.code).toBe(77);
    expect(noToken.stderr).toContain('no admin token: pass --token or MAILPROXY_TOKEN');

    expect((await cli(['tenants', 'list', '--bogus'])).code).toBe(64);
    expect((await cli(['tenants', 'frobnicate'])).stderr).toContain('tenants: unknown verb: frobnicate');
    expect((await cli(['messages', 'list', '--limit', 'many'])).stderr).toContain('--limit must be a whole number');
    const help = await cli(['tenants', '--help']);
    expect(help).toMatchObject({ code: 0 });
    expect(help.stdout).toContain('mailproxy tenants delete ID [--force]');
    expect((await cli(['help'])).stdout).toContain('backup FILE');
    expect((await cli(['help', 'backup'])).stdout).toContain('mailproxy backup FILE [--force]');
  });
});
