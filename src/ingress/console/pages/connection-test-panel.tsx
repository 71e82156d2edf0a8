/** The result of an account's connection test: the verdict, each step with the relay's reply and time, the TLS. */
import type { ConnectionTestView } from '../../http/index.js';
import { DataTable } from './data-table.js';

export function ConnectionTestPanel(props: { result: ConnectionTestView }) {
  const { result } = props;
  const tls = result.tls;
  return (
    <section class="panel" aria-labelledby="test-heading">
      <h2 id="test-heading">
        Connection test: {result.ok ? 'passed' : `failed at ${result.failed_step ?? 'connect'}`}
      </h2>
      {result.reason === null ? null : (
        <p class="error-box" role="alert">
          {result.reason}
        </p>
      )}
      <DataTable columns={['Step', 'Result', 'Reply', { label: 'Time', num: true }]}>
        {result.steps.map((step) => (
          <tr>
            <td>{step.step}</td>
            <td>
              <span class={step.ok ? 'badge ok' : 'badge bad'}>{step.ok ? 'ok' : 'failed'}</span>
            </td>
            <td>{step.text === null ? <span class="muted">no reply</span> : step.text.split(/\r?\n/).pop()}</td>
            <td class="num">{step.duration_ms} ms</td>
          </tr>
        ))}
      </DataTable>
      <p>
        TLS:{' '}
        {tls === null
          ? 'none'
          : `${tls.version ?? '?'} ${tls.cipher ?? ''}, certificate ${tls.certificate}${tls.certificate_error === null ? '' : ` (${tls.certificate_error})`}`}
        . Nothing was sent.
      </p>
    </section>
  );
}
