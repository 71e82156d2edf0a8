/**
 * A tenant's routing rules, end to end: messages that name no account go through the account of
 * the first rule they match (batch code, header, sender domain, priority), over HTTP and SMTP, and
 * the rest through the default account; a message that names its account keeps it. The rules are
 * set with PUT /tenant/{id}, shown by `mailproxy routes show`, and tried with POST
 * /tenant/{id}/routes/test and `mailproxy routes test`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { openSubmission } from '../helpers/smtp-submit.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const RULES = [
  { match: { batch_codes: ['newsletter'] }, account_id: 'bulk' },
  { match: { header: { name: 'X-Stream', value: 'bulk' } }, account_id: 'bulk' },
  { match: { sender_domains: ['*.news.example'], priorities: [3] }, account_id: 'bulk' },
  { match: { batch_codes: ['gone'] }, account_id: 'temporary' },
];

describe('routing rules', () => {
  let fx: QueueFixture;
  let main: SmtpSink;
  let bulk: SmtpSink;
  let key: string;

  const subjectsIn = (sink: SmtpSink): string[] =>
    sink.messages.map((mail) => /^Subject: subject (\S+)$/m.exec(mail.raw.toString())?.[1] ?? '?').sort();
  const settleUntil = (done: () => boolean, what: string) =>
    eventually(async () => {
      await fx.settle();
      return done();
    }, what);

  beforeAll(async () => {
    main = await startSmtpSink();
    bulk = await startSmtpSink();
    fx = await startQueueFixture();
    key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', main, { is_default: true });
    await fx.createAccount('acme', 'bulk', bulk);
    await fx.createAccount('acme', 'temporary', bulk);
    expect((await fx.admin('PUT', '/tenant/acme', { routes: RULES })).status).toBe(200);
    // A rule whose account is deleted afterwards is passed over.
    expect((await fx.admin('DELETE', '/account/temporary?tenant_id=acme')).status).toBe(200);
  });
  afterAll(async () => {
    await fx.stop();
    fx.t.cleanup();
    await main.stop();
    await bulk.stop();
  });

  it('sends what matches a rule through its account and the rest through the default, over HTTP', async () => {
    const posted = await fx.post(key, [
      message('by-batch', { batch_code: 'newsletter' }),
      message('by-header', { headers: { 'x-stream': 'bulk' } }),
      message('by-domain', { from: 'letters@weekly.news.example', priority: 3 }),
      message('domain-not-priority', { from: 'letters@weekly.news.example', priority: 1 }),
      message('plain'),
      message('named', { batch_code: 'newsletter', account_id: 'main' }),
      message('deleted-rule', { batch_code: 'gone' }),
    ]);
    expect(posted.status, posted.text).toBe(200);
    await settleUntil(() => main.messages.length + bulk.messages.length === 7, 'all seven relayed');
    expect(subjectsIn(bulk)).toEqual(['by-batch', 'by-domain', 'by-header']);
    expect(subjectsIn(main)).toEqual(['deleted-rule', 'domain-not-priority', 'named', 'plain']);
    expect((await fx.detail('acme', 'by-header')).message.account_id).toBe('bulk');
  });

  it('routes an SMTP submission by its header', async () => {
    const session = await openSubmission(fx.t.daemon.smtp?.plain?.port ?? 0);
    try {
      await session.login('acme', key);
      await session.send(
        { from: 'app@example.com', to: ['someone@example.net'] },
        'From: app@example.com\r\nTo: someone@example.net\r\nSubject: subject smtp-bulk\r\nX-Stream: bulk\r\n\r\nHello.\r\n',
      );
    } finally {
      session.close();
    }
    await settleUntil(() => subjectsIn(bulk).includes('smtp-bulk'), 'the SMTP message through bulk');
  });

  it('answers where a message would go and why, over the API and the CLI', async () => {
    const tested = await fx.admin('POST', '/tenant/acme/routes/test', {
      from: 'a@example.com',
      batch_code: 'newsletter',
    });
    expect(tested.body).toEqual({ account_id: 'bulk', chosen_by: 'rule', rule: 0, why: 'rule 0 matches' });
    const plain = await fx.admin('POST', '/tenant/acme/routes/test', { from: 'a@example.com' });
    expect(plain.body).toMatchObject({ account_id: 'main', chosen_by: 'default', rule: null });

    const env = { MAILPROXY_URL: fx.t.url, MAILPROXY_TOKEN: fx.t.adminToken };
    const cli = await runCli(
      ['routes', 'test', '--tenant', 'acme', '--from', 'x@example.com', '--header', 'X-Stream: bulk'],
      { env },
    );
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/account:\s+bulk/);
    expect(cli.stdout).toMatch(/rule 1 matches/);
    const shown = await runCli(['routes', 'show', '--tenant', 'acme'], { env });
    expect(shown.stdout).toContain('0  batch_codes=newsletter -> bulk');
  });

  it('refuses a rule naming an account the tenant does not have', async () => {
    const refused = await fx.admin('PUT', '/tenant/acme', { routes: [{ match: {}, account_id: 'nowhere' }] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('VALIDATION_FAILED');
  });
});
