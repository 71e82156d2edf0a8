/** Admin only: the tenants (no secret ever shown) and a tenant's suppression list. */
import type { SuppressionRecord } from '../../../core/bounce/index.js';
import type { TenantView } from '../../../core/contracts/index.js';
import { whenMs } from '../format.js';
import { CsrfField, Layout } from '../layout.js';
import type { ConsoleSession } from '../session-store.js';
import { CONSOLE_PATH } from '../session.js';
import { DataTable } from './data-table.js';

export function TenantsPage(props: { session: ConsoleSession; tenants: TenantView[] }) {
  return (
    <Layout title="Tenants" session={props.session} current="tenants">
      <DataTable columns={['Tenant', 'Active', 'Reports to', 'Key expires', 'Links']}>
        {props.tenants.map((tenant) => {
          const q = encodeURIComponent(tenant.id);
          return (
            <tr>
              <td>
                <a href={`${CONSOLE_PATH}/tenants/${q}`}>{tenant.id}</a>
                {tenant.name === null ? (
                  ''
                ) : (
                  <>
                    <br />
                    <span class="muted">{tenant.name}</span>
                  </>
                )}
              </td>
              <td>
                <span class={tenant.active ? 'badge ok' : 'badge held'}>{tenant.active ? 'active' : 'inactive'}</span>
              </td>
              <td>
                {tenant.client_base_url === null ? (
                  <span class="muted">none</span>
                ) : (
                  `${tenant.client_base_url}${tenant.client_sync_path}`
                )}
              </td>
              <td>{tenant.api_key_expires_at ?? 'never'}</td>
              <td>
                <a href={`${CONSOLE_PATH}/messages?tenant=${q}`}>messages</a> ·{' '}
                <a href={`${CONSOLE_PATH}/suppressions?tenant=${q}`}>suppressions</a>
              </td>
            </tr>
          );
        })}
      </DataTable>
    </Layout>
  );
}

export interface SuppressionsPageProps {
  session: ConsoleSession;
  tenants: TenantView[];
  tenant: string;
  /** The exact-address filter: addresses are kept sealed, matched by digest, so there is no partial match. */
  address: string;
  suppressions: SuppressionRecord[] | null;
  nextHref: string | null;
  notice: string | null;
}

/** Adds an address to the chosen tenant's list: suppressed until removed by hand. */
function AddSuppression(props: { session: ConsoleSession; tenant: string }) {
  return (
    <form
      method="post"
      action={`${CONSOLE_PATH}/suppressions/add`}
      class="filters panel"
      aria-label="Add a suppression"
    >
      <CsrfField session={props.session} />
      <input type="hidden" name="tenant" value={props.tenant} />
      <div>
        <label for="s-address">Address to suppress</label>
        <input id="s-address" name="address" type="email" required />
      </div>
      <div>
        <label for="s-reason">Reason</label>
        <input id="s-reason" name="reason" />
      </div>
      <div class="actions">
        <button type="submit">Add to {props.tenant}'s list</button>
      </div>
    </form>
  );
}

export const removeHref = (tenant: string, address: string): string =>
  `${CONSOLE_PATH}/suppressions/remove?${new URLSearchParams({ tenant, address }).toString()}`;

export function SuppressionsPage(props: SuppressionsPageProps) {
  return (
    <Layout title="Suppression lists" session={props.session} current="suppressions" notice={props.notice}>
      <form
        method="get"
        action={`${CONSOLE_PATH}/suppressions`}
        class="filters panel"
        role="search"
        aria-label="Suppressions"
      >
        <div>
          <label for="s-tenant">Tenant</label>
          <select id="s-tenant" name="tenant">
            {props.tenants.map((tenant) => (
              <option value={tenant.id} selected={tenant.id === props.tenant}>
                {tenant.id}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="s-filter">Address (exactly, any case)</label>
          <input id="s-filter" name="address" type="email" value={props.address} />
        </div>
        <div class="actions">
          <button type="submit">Show</button>
        </div>
      </form>
      {props.tenant === '' ? null : <AddSuppression session={props.session} tenant={props.tenant} />}
      {props.suppressions === null ? (
        <p>Choose a tenant.</p>
      ) : props.suppressions.length === 0 ? (
        <p>No suppressed address.</p>
      ) : (
        <DataTable columns={['Address', 'Source', 'Reason', 'Since', 'Until', 'Action']}>
          {props.suppressions.map((record) => (
            <tr>
              <td>{record.address}</td>
              <td>{record.source}</td>
              <td>{record.reason ?? ''}</td>
              <td>{whenMs(record.createdAt)}</td>
              <td>{record.expiresAt === null ? 'removed by hand' : whenMs(record.expiresAt)}</td>
              <td>
                <a href={removeHref(props.tenant, record.address)}>Remove</a>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {props.nextHref === null ? null : (
        <nav class="pager" aria-label="Pages">
          <a href={props.nextHref} rel="next">
            Next page
          </a>
        </nav>
      )}
    </Layout>
  );
}
