/**
 * Accounts: the list per tenant (state, why paused, limit use) and one account's page with
 * its edit form (the password write-only), a Resume button when paused, and a connection test.
 */
import type { AccountActivityView, ConnectionTestView } from '../../http/index.js';
import { CsrfField, Layout } from '../layout.js';
import type { ConsoleSession } from '../session-store.js';
import { CONSOLE_PATH } from '../session.js';
import { ConnectionTestPanel } from './connection-test-panel.js';
import { DataTable } from './data-table.js';

export const accountHref = (account: { tenant_id: string; id: string }): string =>
  `${CONSOLE_PATH}/accounts/${encodeURIComponent(account.tenant_id)}/${encodeURIComponent(account.id)}`;

const FAILOVER_CAUSES = { paused: 'paused', unreachable: 'its relay does not answer', over_limit: 'over its limits' };

function State(props: { account: AccountActivityView }) {
  const { account } = props;
  const paused = account.state === 'paused';
  return (
    <>
      <span class={paused ? 'badge bad' : 'badge ok'}>{account.state}</span>
      {paused ? (
        <>
          <br />
          <span class="muted">{account.paused_reason}</span>
        </>
      ) : null}
      {account.failover ? (
        <>
          <br />
          <span class="badge wait">via {account.failover.via_account_id}</span>{' '}
          <span class="muted">{FAILOVER_CAUSES[account.failover.cause]}</span>
        </>
      ) : null}
      {account.pace ? (
        <>
          <br />
          <span class="badge wait">paced {account.pace.per_minute}/min</span>{' '}
          <span class="muted">its relay pushed back ({account.pace.pushbacks} times)</span>
        </>
      ) : null}
    </>
  );
}

const usage = (account: AccountActivityView): string =>
  account.usage === undefined
    ? '–'
    : Object.entries(account.usage)
        .map(([window, use]) => `${use.used}${use.limit === null ? '' : `/${use.limit}`} per ${window}`)
        .join(', ');

export function AccountsPage(props: {
  session: ConsoleSession;
  accounts: AccountActivityView[];
  notice: string | null;
}) {
  return (
    <Layout title="Accounts" session={props.session} current="accounts" notice={props.notice}>
      {props.accounts.length === 0 ? (
        <p>No account yet.</p>
      ) : (
        <DataTable columns={['Tenant', 'Account', 'Relay', 'State', { label: 'Waiting', num: true }, 'Usage']}>
          {props.accounts.map((account) => (
            <tr>
              <td>{account.tenant_id}</td>
              <td>
                <a href={accountHref(account)}>{account.id}</a>
              </td>
              <td>
                {account.host}:{account.port} <span class="muted">{account.tls_mode}</span>
              </td>
              <td>
                <State account={account} />
              </td>
              <td class="num">{account.waiting ?? 0}</td>
              <td>{usage(account)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </Layout>
  );
}

const TLS_MODES = ['starttls', 'implicit', 'none'] as const;

function Field(props: { name: string; label: string; value: string | number | null; type?: string; hint?: string }) {
  return (
    <div>
      <label for={`a-${props.name}`}>{props.label}</label>
      <input
        id={`a-${props.name}`}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.value === null ? '' : String(props.value)}
      />
      {props.hint === undefined ? null : <span class="muted">{props.hint}</span>}
    </div>
  );
}

function EditForm(props: { session: ConsoleSession; account: AccountActivityView }) {
  const { account } = props;
  return (
    <form method="post" action={`${accountHref(account)}/save`} class="filters panel" aria-label="Edit the account">
      <CsrfField session={props.session} />
      <Field name="host" label="Host" value={account.host} />
      <Field name="port" label="Port" value={account.port} type="number" />
      <div>
        <label for="a-tls_mode">TLS</label>
        <select id="a-tls_mode" name="tls_mode">
          {TLS_MODES.map((mode) => (
            <option value={mode} selected={mode === account.tls_mode}>
              {mode}
            </option>
          ))}
        </select>
      </div>
      <Field name="user" label="User" value={account.user} />
      <Field
        name="password"
        label="Password"
        value=""
        type="password"
        hint={account.has_password ? 'stored; empty keeps it' : 'none stored'}
      />
      <Field
        name="limit_per_minute"
        label="Per minute"
        value={account.limit_per_minute}
        type="number"
        hint="empty: no limit"
      />
      <Field
        name="limit_per_hour"
        label="Per hour"
        value={account.limit_per_hour}
        type="number"
        hint="empty: no limit"
      />
      <Field name="limit_per_day" label="Per day" value={account.limit_per_day} type="number" hint="empty: no limit" />
      <Field name="max_connections" label="Max connections" value={account.max_connections} type="number" />
      <div class="actions">
        <button type="submit">Save</button>
      </div>
    </form>
  );
}

export function AccountPage(props: {
  session: ConsoleSession;
  account: AccountActivityView;
  notice: string | null;
  test: ConnectionTestView | null;
}) {
  const { account } = props;
  const href = accountHref(account);
  return (
    <Layout
      title={`Account ${account.tenant_id}/${account.id}`}
      session={props.session}
      current="accounts"
      notice={props.notice}
    >
      <section class="panel" aria-labelledby="state-heading">
        <h2 id="state-heading">State</h2>
        <p>
          <State account={account} /> · {account.waiting ?? 0} waiting · {usage(account)}
        </p>
        <div class="actions">
          {account.state === 'paused' ? (
            <form method="post" action={`${href}/resume`}>
              <CsrfField session={props.session} />
              <button type="submit">Resume</button>
            </form>
          ) : null}
          <form method="post" action={`${href}/test`}>
            <CsrfField session={props.session} />
            <button type="submit" class="secondary">
              Test connection
            </button>
          </form>
        </div>
      </section>
      {props.test === null ? null : <ConnectionTestPanel result={props.test} />}
      <h2>Settings</h2>
      <EditForm session={props.session} account={account} />
    </Layout>
  );
}
