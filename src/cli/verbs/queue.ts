/** `mailproxy queue stats`, `suspend` and `activate`: the queue at a glance, and holding a tenant's or batch's mail. */
import { stringOption } from '../args.js';
import { apiCall, type Command, type Verb } from '../command.js';
import { fields, instant, table } from '../output.js';

function stats(body: any): string {
  const { queue } = body;
  let out = fields([
    ['waiting', queue.waiting],
    ...Object.entries(queue.by_status).map(([status, count]) => [`  ${status}`, count] as const),
    [
      'by priority',
      Object.entries(queue.by_priority)
        .map(([priority, count]) => `${priority}: ${String(count)}`)
        .join('  '),
    ],
    [
      'oldest due',
      queue.oldest_due === null
        ? null
        : `${queue.oldest_due.id} of ${queue.oldest_due.tenant_id}/${queue.oldest_due.account_id}, due since ${instant(queue.oldest_due.due_ts)} (${queue.oldest_due.overdue_seconds} s)`,
    ],
  ]);
  if (queue.by_account.length > 0) {
    out += `\n${table(queue.by_account, [
      { header: 'TENANT', value: (row: any) => row.tenant_id },
      { header: 'ACCOUNT', value: (row: any) => row.account_id },
      { header: 'WAITING', value: (row: any) => row.waiting },
      {
        header: 'BY STATUS',
        value: (row: any) =>
          Object.entries(row.by_status)
            .map(([status, count]) => `${status} ${String(count)}`)
            .join(', '),
      },
    ])}`;
  }
  // The admin also sees the loops; a tenant key only its queue.
  const health: [string, unknown][] = [];
  if (body.dispatcher !== undefined) health.push(['dispatcher', body.dispatcher.running ? 'running' : 'stopped']);
  if (body.reports !== undefined)
    health.push([
      'reports',
      `${body.reports.tenants} tenants, backlog ${body.reports.backlog}, failing: ${body.reports.failing.length === 0 ? 'none' : body.reports.failing.join(', ')}`,
    ]);
  if (body.mirror !== undefined)
    health.push([
      'mirror',
      body.mirror.enabled
        ? `${body.mirror.state}, backlog ${body.mirror.backlog}${body.mirror.last_error ? `, last error at ${instant(body.mirror.last_error_ts)}: ${body.mirror.last_error}` : ''}`
        : 'off',
    ]);
  if (Array.isArray(body.bounce))
    health.push(['bounce mailboxes', body.bounce.length === 0 ? 'none' : body.bounce.map((box: any) => `${box.mailbox} ${box.state}`).join(', ')]);
  return health.length === 0 ? out : `${out}\n${fields(health)}`;
}

/** suspend / activate: POST /commands/<name> with the tenant and, optionally, one batch. */
const holdVerb = (name: 'suspend' | 'activate'): Verb => ({
  usage: '--tenant T [--batch B]',
  summary: name === 'suspend' ? "hold a tenant's waiting mail (or one batch's) until activated" : 'release what suspend held',
  options: { tenant: { type: 'string' }, batch: { type: 'string' } },
  positionals: [0, 0],
  api: true,
  run: (input) => {
    const body = { tenant_id: stringOption(input.values, 'tenant'), batch_code: stringOption(input.values, 'batch') };
    return apiCall(
      input,
      (client) => client.request('POST', `/commands/${name}`, { body }),
      (answer) => {
        const what = answer.batch_code === '*' ? `tenant ${body.tenant_id ?? ''}` : `batch ${answer.batch_code} of tenant ${body.tenant_id ?? ''}`;
        const count = name === 'suspend' ? `${answer.suspended_messages} messages held` : `${answer.activated_messages} messages released`;
        return `${name === 'suspend' ? 'suspended' : 'activated'} ${what}: ${count}; suspended now: ${answer.suspensions.length === 0 ? 'nothing' : answer.suspensions.join(', ')}\n`;
      },
    );
  },
});

export const queueCommand: Command = {
  name: 'queue',
  summary: 'The queue at a glance.',
  verbs: {
    stats: {
      usage: '[--tenant T]',
      summary: 'waiting mail by status, priority and account, the oldest due, and the loops (GET /status)',
      options: { tenant: { type: 'string' } },
      positionals: [0, 0],
      api: true,
      run: (input) => apiCall(input, (client) => client.request('GET', '/status', { query: { tenant_id: stringOption(input.values, 'tenant') } }), stats),
    },
  },
};

export const suspendCommand: Command = { name: 'suspend', summary: "Hold a tenant's mail.", verbs: { '': holdVerb('suspend') } };
export const activateCommand: Command = { name: 'activate', summary: "Release a tenant's held mail.", verbs: { '': holdVerb('activate') } };
