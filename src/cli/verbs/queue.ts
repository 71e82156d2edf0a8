/** `mailproxy queue stats`, `suspend` and `activate`: the queue at a glance, and holding a tenant's or batch's mail. */
import { stringOption } from '../args.js';
import type { ActivateResult, StatusAnswer, SuspendResult } from '../answers.js';
import { apiCall, tenantCall, type Command, type Verb } from '../command.js';
import { fields } from '../fields.js';
import { instant, table } from '../output.js';

/** `1 high` for priority `1`: the number the API counts by, with its label. */
const PRIORITY_LABELS: Record<string, string> = { '0': 'immediate', '1': 'high', '2': 'normal', '3': 'low' };

type Queue = StatusAnswer['queue'];

function oldestDue(due: Queue['oldest_due'] | undefined): string | null {
  if (due === null || due === undefined) return null;
  return `${due.id} of ${due.tenant_id}/${due.account_id}, due since ${instant(due.due_ts)} (${due.overdue_seconds} s)`;
}

function stats(body: StatusAnswer): string {
  const { queue } = body;
  const byPriority = Object.entries(queue.by_priority).map(
    ([priority, count]) => [`${priority} ${PRIORITY_LABELS[priority] ?? ''}`.trimEnd(), count] as const,
  );
  let out = fields([
    ['waiting', queue.waiting],
    ['by status', queue.by_status],
    ['by priority', Object.fromEntries(byPriority)],
    ['oldest due', oldestDue(queue.oldest_due)],
  ]);
  if (queue.by_account.length > 0) {
    out += `\n${table(queue.by_account, [
      { header: 'TENANT', value: (row) => row.tenant_id },
      { header: 'ACCOUNT', value: (row) => row.account_id },
      { header: 'WAITING', value: (row) => row.waiting },
      {
        header: 'BY STATUS',
        value: (row) =>
          Object.entries(row.by_status)
            .map(([status, count]) => `${status} ${String(count)}`)
            .join(', '),
      },
    ])}`;
  }
  const health = loops(body);
  return health.length === 0 ? out : `${out}\n${fields(health)}`;
}

/** The admin also sees the loops; a tenant key only its queue. */
function loops(body: StatusAnswer): [string, unknown][] {
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
    health.push([
      'bounce mailboxes',
      body.bounce.length === 0 ? 'none' : body.bounce.map((box) => `${box.mailbox} ${box.state}`).join(', '),
    ]);
  return health;
}

/** suspend / activate: POST /commands/<name> with the tenant and, optionally, one batch; `count` says what it did. */
const holdVerb = <A extends SuspendResult | ActivateResult>(
  name: 'suspend' | 'activate',
  count: (answer: A) => string,
): Verb => ({
  usage: '[--tenant T] [--batch B]',
  summary:
    name === 'suspend' ? "hold a tenant's waiting mail (or one batch's) until activated" : 'release what suspend held',
  options: { tenant: { type: 'string' }, batch: { type: 'string' } },
  positionals: [0, 0],
  api: true,
  run: (input) => {
    const batchCode = stringOption(input.values, 'batch');
    return tenantCall(
      input,
      (client, tenantId) =>
        client.request<A>('POST', `/commands/${name}`, { body: { tenant_id: tenantId, batch_code: batchCode } }),
      (answer, tenantId) => {
        const what =
          answer.batch_code === '*'
            ? `tenant ${tenantId ?? ''}`
            : `batch ${answer.batch_code} of tenant ${tenantId ?? ''}`;
        return `${name === 'suspend' ? 'suspended' : 'activated'} ${what}: ${count(answer)}; suspended now: ${answer.suspensions.length === 0 ? 'nothing' : answer.suspensions.join(', ')}\n`;
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
      run: (input) =>
        apiCall(
          input,
          (client) =>
            client.request<StatusAnswer>('GET', '/status', {
              query: { tenant_id: stringOption(input.values, 'tenant') },
            }),
          stats,
        ),
    },
  },
};

export const suspendCommand: Command = {
  name: 'suspend',
  summary: "Hold a tenant's mail.",
  verbs: { '': holdVerb<SuspendResult>('suspend', (answer) => `${answer.suspended_messages} messages held`) },
};
export const activateCommand: Command = {
  name: 'activate',
  summary: "Release a tenant's held mail.",
  verbs: { '': holdVerb<ActivateResult>('activate', (answer) => `${answer.activated_messages} messages released`) },
};
