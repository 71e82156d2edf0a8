/** One tenant: where its reports go, how reporting is doing, and the last attempts of posting them (the report log). */
import type { TenantView } from '../../../core/contracts/index.js';
import type { SyncStatus } from '../../../core/report/index.js';
import type { viewReportAttempt } from '../../http/index.js';
import { when, whenMs } from '../format.js';
import { Layout } from '../layout.js';
import type { ConsoleSession } from '../session-store.js';
import { DataTable } from './data-table.js';

type AttemptView = ReturnType<typeof viewReportAttempt>;

function ReportLog(props: { attempts: AttemptView[] }) {
  return (
    <section aria-labelledby="report-log-heading">
      <h2 id="report-log-heading">Delivery-report log</h2>
      {props.attempts.length === 0 ? (
        <p>No report posted yet.</p>
      ) : (
        <DataTable
          columns={[
            'At',
            'Result',
            'HTTP status',
            'Error',
            { label: 'Latency', num: true },
            { label: 'Items', num: true },
          ]}
        >
          {props.attempts.map((attempt) => (
            <tr>
              <td>{when(attempt.at_ts)}</td>
              <td>
                <span class={attempt.ok ? 'badge ok' : 'badge bad'}>{attempt.ok ? 'acknowledged' : 'failed'}</span>
              </td>
              <td>{attempt.http_status ?? <span class="muted">no answer</span>}</td>
              <td>{attempt.error ?? ''}</td>
              <td class="num">{attempt.latency_ms} ms</td>
              <td class="num">{attempt.items === 0 ? 'heartbeat' : attempt.items}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

export function TenantPage(props: {
  session: ConsoleSession;
  tenant: TenantView;
  sync: SyncStatus | null;
  attempts: AttemptView[];
}) {
  const { tenant, sync } = props;
  return (
    <Layout title={`Tenant ${tenant.id}`} session={props.session} current="tenants">
      <section class="panel" aria-labelledby="reports-heading">
        <h2 id="reports-heading">Delivery reports</h2>
        <dl class="fields">
          <dt>Reports to</dt>
          <dd>{sync?.clientSyncUrl ?? 'nobody (no client_base_url)'}</dd>
          <dt>Backlog</dt>
          <dd>{sync?.backlog ?? 0}</dd>
          <dt>Last success</dt>
          <dd>{whenMs(sync?.lastSuccessAt ?? null)}</dd>
          <dt>Last error</dt>
          <dd>{sync?.lastError ?? 'none'}</dd>
          <dt>Failures in a row</dt>
          <dd>{sync?.consecutiveFailures ?? 0}</dd>
        </dl>
      </section>
      <ReportLog attempts={props.attempts} />
    </Layout>
  );
}
