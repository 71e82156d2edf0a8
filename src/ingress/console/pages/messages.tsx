/** The message list: a search form whose every field is a URL parameter, live waiting counts, one page of results. */
import {
  type BulkAction,
  type MessageStatus,
  type MessageSummary,
  MESSAGE_STATUSES,
} from '../../../core/message/index.js';
import type { QueueOverview } from '../../http/index.js';
import { statusClass, whenMs } from '../format.js';
import { Layout } from '../layout.js';
import type { ConsoleSession } from '../session-store.js';
import { CONSOLE_PATH } from '../session.js';
import { DataTable } from './data-table.js';

export interface MessageFilters {
  tenant: string;
  q: string;
  status: string;
  account: string;
  batch: string;
  recipient: string;
  from: string;
  to: string;
}

export interface MessagesPageProps {
  session: ConsoleSession;
  filters: MessageFilters;
  /** With `nodeId` in fleet mode: the node that holds each one. */
  messages: (MessageSummary & { nodeId?: string })[];
  /** Fleet mode: nodes that did not answer (their messages are not on this page). */
  missingNodes?: readonly string[];
  nextHref: string | null;
  firstHref: string | null;
  waiting: QueueOverview;
  notice: string | null;
  /** The bulk actions offered over this filter (none without one). */
  bulk: readonly BulkAction[];
}

export const messageHref = (message: Pick<MessageSummary, 'tenantId' | 'clientId'>): string =>
  `${CONSOLE_PATH}/messages/${encodeURIComponent(message.tenantId)}/${encodeURIComponent(message.clientId)}`;

function Field(props: {
  name: keyof MessageFilters;
  label: string;
  value: string;
  type?: string;
  placeholder?: string;
}) {
  return (
    <div>
      <label for={`f-${props.name}`}>{props.label}</label>
      <input
        id={`f-${props.name}`}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.value}
        placeholder={props.placeholder}
      />
    </div>
  );
}

function Filters(props: { filters: MessageFilters; admin: boolean }) {
  const f = props.filters;
  return (
    <form
      method="get"
      action={`${CONSOLE_PATH}/messages`}
      class="filters panel"
      role="search"
      aria-label="Find messages"
    >
      <Field
        name="q"
        label="Search subject, sender, recipients"
        value={f.q}
        type="search"
        placeholder="invoice ann@example.net"
      />
      <div>
        <label for="f-status">Status</label>
        <select id="f-status" name="status">
          <option value="">any</option>
          {MESSAGE_STATUSES.map((status) => (
            <option value={status} selected={f.status === status}>
              {status}
            </option>
          ))}
        </select>
      </div>
      {props.admin ? <Field name="tenant" label="Tenant" value={f.tenant} /> : null}
      <Field name="account" label="Account" value={f.account} />
      <Field name="batch" label="Batch" value={f.batch} />
      <Field name="recipient" label="Recipient (whole address)" value={f.recipient} type="email" />
      <Field name="from" label="Accepted from (UTC)" value={f.from} type="datetime-local" />
      <Field name="to" label="Accepted before (UTC)" value={f.to} type="datetime-local" />
      <div class="actions">
        <button type="submit">Search</button>
        <a class="button secondary" href={`${CONSOLE_PATH}/messages`}>
          Clear
        </a>
      </div>
    </form>
  );
}

function WaitingCounts(props: { waiting: QueueOverview; filters: MessageFilters }) {
  const statuses = Object.entries(props.waiting.by_status) as Array<[MessageStatus, number]>;
  const base = props.filters.tenant === '' ? '' : `&tenant=${encodeURIComponent(props.filters.tenant)}`;
  return (
    <section aria-labelledby="waiting-heading">
      <h2 id="waiting-heading">Waiting now: {props.waiting.waiting}</h2>
      <ul class="counts">
        {statuses.map(([status, count]) => (
          <li>
            <a class={statusClass(status)} href={`${CONSOLE_PATH}/messages?status=${status}${base}`}>
              {status}: {count}
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Results(props: { messages: MessagesPageProps['messages']; admin: boolean }) {
  if (props.messages.length === 0) return <p>No message matches these filters.</p>;
  const fleet = props.messages.some((message) => message.nodeId !== undefined);
  return (
    <DataTable
      columns={[
        'Id',
        'Status',
        props.admin ? 'Tenant' : null,
        fleet ? 'Node' : null,
        'To',
        'Subject',
        'Account',
        'Batch',
        'Accepted',
        { label: 'Attempts', num: true },
      ]}
      caption="Newest first"
    >
      {props.messages.map((message) => (
        <tr>
          <td>
            <a href={messageHref(message)}>{message.clientId}</a>
          </td>
          <td>
            <span class={statusClass(message.status)}>{message.status}</span>
          </td>
          {props.admin ? <td>{message.tenantId}</td> : null}
          {fleet ? <td>{message.nodeId}</td> : null}
          <td>{message.rcptTo.join(', ')}</td>
          <td>{message.subject ?? ''}</td>
          <td>{message.accountId}</td>
          <td>{message.batchCode ?? ''}</td>
          <td>{whenMs(message.createdAt)}</td>
          <td class="num">{message.attempts}</td>
        </tr>
      ))}
    </DataTable>
  );
}

const BULK_LINK: Record<BulkAction, string> = {
  resend: 'Resend all matching…',
  'retry-now': 'Retry now all matching…',
  delete: 'Delete all matching…',
  suspend: 'Suspend this batch…',
  activate: 'Activate this batch…',
};

/** Links to each action's confirmation page, which counts first; nothing is done from here. */
function BulkActions(props: { filters: MessageFilters; actions: readonly BulkAction[] }) {
  if (props.actions.length === 0) return null;
  const query = new URLSearchParams(Object.entries(props.filters).filter(([, value]) => value !== '')).toString();
  return (
    <section aria-labelledby="bulk-heading">
      <h2 id="bulk-heading">Act on every message this search finds</h2>
      <div class="actions">
        {props.actions.map((action) => (
          <a
            class={`button${action === 'resend' || action === 'retry-now' ? '' : ' secondary'}`}
            href={`${CONSOLE_PATH}/bulk/${action}?${query}`}
          >
            {BULK_LINK[action]}
          </a>
        ))}
      </div>
    </section>
  );
}

export function MessagesPage(props: MessagesPageProps) {
  const admin = props.session.principal.kind === 'admin';
  return (
    <Layout title="Messages" session={props.session} current="messages" notice={props.notice}>
      <Filters filters={props.filters} admin={admin} />
      <WaitingCounts waiting={props.waiting} filters={props.filters} />
      <BulkActions filters={props.filters} actions={props.bulk} />
      <section aria-labelledby="results-heading">
        <h2 id="results-heading">
          Results{' '}
          <span class="muted">
            ({props.messages.length}
            {props.nextHref === null ? '' : '+'} on this page)
          </span>
        </h2>
        {props.missingNodes === undefined || props.missingNodes.length === 0 ? null : (
          <p class="notice" role="status">
            Nodes not answering (their messages are not listed): {props.missingNodes.join(', ')}
          </p>
        )}
        <Results messages={props.messages} admin={admin} />
        <nav class="pager" aria-label="Pages">
          {props.firstHref === null ? null : <a href={props.firstHref}>First page</a>}
          {props.nextHref === null ? (
            <span class="muted">End of results</span>
          ) : (
            <a href={props.nextHref} rel="next">
              Next page
            </a>
          )}
        </nav>
      </section>
    </Layout>
  );
}
