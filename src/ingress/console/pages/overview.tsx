/**
 * The overview: the queue by status and priority, the last hour's outcomes,
 * each account's health and limit use, and the loops (reports, bounce
 * mailboxes, the outbox towards the mirror) that an operator watches.
 */
import type { MailboxStatus } from '../../../core/bounce/index.js';
import type { FleetQueues } from '../../../core/fleet/index.js';
import type { MirrorStatus } from '../../../core/events/index.js';
import type { SyncStatus } from '../../../core/report/index.js';
import { type ThroughputSeries, PRIORITY_LABELS } from '../../../core/message/index.js';
import type { AccountActivityView, QueueOverview } from '../../http/index.js';
import { ago, statusClass, whenMs } from '../format.js';
import { Layout } from '../layout.js';
import { FleetPanel } from './fleet-panel.js';
import type { ConsoleSession } from '../session-store.js';
import type { FailingDomain } from '../../../core/tenant/index.js';
import { CONSOLE_PATH } from '../session.js';
import { ThroughputChart } from './throughput-chart.js';
import { DataTable } from './data-table.js';

export interface OverviewProps {
  session: ConsoleSession;
  queue: QueueOverview;
  throughput: ThroughputSeries;
  accounts: AccountActivityView[];
  reports: SyncStatus[];
  /** Admin only: the mailboxes and the mirror are the daemon's, not a tenant's. */
  bounces: MailboxStatus[] | null;
  mirror: MirrorStatus | null;
  /** Admin in fleet mode: each node's waiting mail and the fleet's total. */
  fleet: FleetQueues | null;
  /** The sending domains (of the tenant, or every tenant for the admin) failing their DNS checks. */
  failingDomains: FailingDomain[];
  now: number;
  notice: string | null;
}

function Queue(props: { queue: QueueOverview }) {
  const { queue } = props;
  return (
    <section class="panel" aria-labelledby="queue-heading">
      <h2 id="queue-heading">Queue: {queue.waiting} waiting</h2>
      <ul class="counts">
        {Object.entries(queue.by_status).map(([status, count]) => (
          <li>
            <a class={statusClass(status)} href={`${CONSOLE_PATH}/messages?status=${status}`}>
              {status}: {count}
            </a>
          </li>
        ))}
      </ul>
      <table>
        <caption class="muted">By priority</caption>
        <tbody>
          {PRIORITY_LABELS.map((name, priority) => (
            <tr>
              <th scope="row">{name}</th>
              <td class="num">{queue.by_priority[`${priority as 0 | 1 | 2 | 3}`]}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">
        {queue.oldest_due === null
          ? 'Nothing is overdue.'
          : `Oldest due: ${queue.oldest_due.id} (${queue.oldest_due.tenant_id}), overdue ${queue.oldest_due.overdue_seconds} s.`}
      </p>
    </section>
  );
}

function Usage(props: { account: AccountActivityView }) {
  const usage = props.account.usage;
  if (usage === undefined) return <>–</>;
  return (
    <>
      {(['minute', 'hour', 'day'] as const)
        .filter((kind) => usage[kind].limit !== null)
        .map((kind) => (
          <div>
            <label
              for={`u-${props.account.tenant_id}-${props.account.id}-${kind}`}
            >{`per ${kind}: ${usage[kind].used}/${usage[kind].limit ?? ''}`}</label>
            <meter
              id={`u-${props.account.tenant_id}-${props.account.id}-${kind}`}
              min={0}
              max={usage[kind].limit ?? 1}
              high={(usage[kind].limit ?? 1) * 0.8}
              value={usage[kind].used}
            ></meter>
          </div>
        ))}
      {usage.minute.limit === null && usage.hour.limit === null && usage.day.limit === null ? (
        <span class="muted">{`no limits; ${usage.hour.used} this hour`}</span>
      ) : null}
    </>
  );
}

function health(account: AccountActivityView, now: number): { label: string; cls: string } {
  if (account.state === 'paused') return { label: `paused: ${account.paused_reason ?? ''}`, cls: 'badge bad' };
  const error = account.last_error;
  if (error && (account.last_success_ts ?? 0) < error.at_ts)
    return { label: `failing (${ago(error.at_ts, now)} ago): ${error.text}`, cls: 'badge wait' };
  return { label: 'healthy', cls: 'badge ok' };
}

/** The account's own IMAP mailbox (a PEC account's receipts arrive there), when it has one. */
function Mailbox(props: { account: AccountActivityView }) {
  const { imap_host: host, imap_port: port, imap_folder: folder } = props.account;
  if (host === null) return null;
  return (
    <>
      <br />
      <span class="muted">{`mailbox ${host}:${port ?? ''} ${folder ?? ''}`}</span>
    </>
  );
}

function Accounts(props: { accounts: AccountActivityView[]; now: number }) {
  return (
    <section aria-labelledby="accounts-heading">
      <h2 id="accounts-heading">Accounts</h2>
      <DataTable columns={['Account', 'Health', { label: 'Waiting', num: true }, 'Connections', 'Limit use']}>
        {props.accounts.map((account) => {
          const state = health(account, props.now);
          return (
            <tr>
              <td>
                {account.tenant_id}/{account.id}
                {account.is_default ? (
                  <>
                    {' '}
                    <span
                      class="badge"
                      title="the tenant's default account: it sends the messages that name no account"
                    >
                      default
                    </span>
                  </>
                ) : null}
                {account.is_pec ? (
                  <>
                    {' '}
                    <span class="badge" title="certified mail: receipts read from the account's mailbox">
                      PEC
                    </span>
                  </>
                ) : null}
                {account.provider === null ? null : (
                  <>
                    {' '}
                    <span
                      class="badge"
                      title={`its provider reports deliveries, bounces and complaints by webhook to ${account.webhook_path ?? ''}`}
                    >
                      {account.provider}
                    </span>
                  </>
                )}
                <br />
                <span class="muted">
                  {account.host}:{account.port}
                </span>
                <Mailbox account={account} />
              </td>
              <td>
                <span class={state.cls}>{state.label}</span>
              </td>
              <td class="num">{account.waiting ?? 0}</td>
              <td>
                {account.connections === undefined
                  ? '–'
                  : `${account.connections.in_use} busy / ${account.connections.open} open / ${account.connections.max} max`}
              </td>
              <td>
                <Usage account={account} />
              </td>
            </tr>
          );
        })}
      </DataTable>
    </section>
  );
}

function Loops(props: {
  reports: SyncStatus[];
  bounces: MailboxStatus[] | null;
  mirror: MirrorStatus | null;
  now: number;
}) {
  return (
    <section aria-labelledby="loops-heading">
      <h2 id="loops-heading">Loops</h2>
      <div class="grid">
        <div class="panel">
          <h3>Delivery reports</h3>
          {props.reports.length === 0 ? (
            <p class="muted">No report endpoint configured.</p>
          ) : (
            <ul>
              {props.reports.map((sync) => (
                <li>
                  {sync.tenantId}:{' '}
                  <span class={sync.consecutiveFailures > 0 ? 'badge bad' : 'badge ok'}>
                    {sync.consecutiveFailures > 0 ? `failing ×${sync.consecutiveFailures}` : 'healthy'}
                  </span>
                  {` backlog ${sync.backlog}, last success ${whenMs(sync.lastSuccessAt)}`}
                  {sync.lastError === null ? '' : `; ${sync.lastError}`}
                </li>
              ))}
            </ul>
          )}
        </div>
        {props.bounces === null ? null : (
          <div class="panel">
            <h3>Bounce mailboxes</h3>
            {props.bounces.length === 0 ? (
              <p class="muted">No bounce mailbox configured.</p>
            ) : (
              <ul>
                {props.bounces.map((box) => (
                  <li>
                    {box.mailbox}: <span class={box.connected ? 'badge ok' : 'badge bad'}>{box.state}</span>
                    {box.last_error === null ? '' : ` ${box.last_error}`}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
        {props.mirror === null ? null : (
          <div class="panel">
            <h3>Outbox to the event mirror</h3>
            <p>
              <span
                class={props.mirror.state === 'connected' || props.mirror.state === 'off' ? 'badge ok' : 'badge bad'}
              >
                {props.mirror.state}
              </span>
              {` backlog ${props.mirror.backlog}`}
              {props.mirror.oldest_unpublished_age_seconds === null
                ? ''
                : `, oldest ${props.mirror.oldest_unpublished_age_seconds} s`}
            </p>
            {props.mirror.last_error === null ? null : <p class="muted">{props.mirror.last_error}</p>}
          </div>
        )}
      </div>
    </section>
  );
}

/** A warning, first on the page: receivers will refuse or distrust these domains' mail until they are fixed. */
function FailingDomains(props: { domains: FailingDomain[] }) {
  if (props.domains.length === 0) return null;
  return (
    <section class="panel" aria-labelledby="domains-heading" role="alert">
      <h2 id="domains-heading">Sending domains failing their DNS checks</h2>
      <ul>
        {props.domains.map((domain) => (
          <li>
            <span class="badge bad">failing</span> {domain.domain} ({domain.tenant_id}): {domain.failing.join(', ')}.{' '}
            <code>
              mailproxy domains check {domain.domain} --tenant {domain.tenant_id}
            </code>{' '}
            says how to fix it.
          </li>
        ))}
      </ul>
    </section>
  );
}

export function OverviewPage(props: OverviewProps) {
  return (
    <Layout title="Overview" session={props.session} current="overview" notice={props.notice}>
      <FailingDomains domains={props.failingDomains} />
      <div class="grid">
        <Queue queue={props.queue} />
        <section class="panel" aria-labelledby="throughput-heading">
          <h2 id="throughput-heading">Last hour</h2>
          <ThroughputChart data={props.throughput} />
        </section>
      </div>
      {props.fleet === null ? null : <FleetPanel fleet={props.fleet} />}
      <Accounts accounts={props.accounts} now={props.now} />
      <Loops reports={props.reports} bounces={props.bounces} mirror={props.mirror} now={props.now} />
    </Layout>
  );
}
