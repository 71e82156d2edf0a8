/**
 * A PEC account's message on the console: what its provider's receipts proved
 * (acceptance, delivery, the error), and every receipt, each downloadable as
 * the original bytes: the evidence the operator hands on.
 */
import type { MessageDetail } from '../../../core/message/index.js';
import type { PecReceiptListing } from '../../../core/pec/index.js';
import { whenMs } from '../format.js';
import { messageHref } from './messages.js';
import { DataTable } from './data-table.js';

const kib = (bytes: number): string => (bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KiB`);

/** Nothing at all for a message no PEC account sent and no receipt names. */
export function PecPanel(props: { message: MessageDetail; receipts: PecReceiptListing[] }) {
  const m = props.message;
  if (props.receipts.length === 0 && m.pecRdaAt === null && m.pecRdcAt === null && m.pecError === null) return null;
  const base = messageHref(m);
  return (
    <section class="panel" aria-labelledby="pec-heading">
      <h2 id="pec-heading">PEC receipts</h2>
      <dl class="fields">
        <dt>Accepted (RdA)</dt>
        <dd>{m.pecRdaAt === null ? 'no acceptance receipt yet' : whenMs(m.pecRdaAt)}</dd>
        <dt>Delivered (RdC)</dt>
        <dd>{m.pecRdcAt === null ? 'no delivery receipt yet' : whenMs(m.pecRdcAt)}</dd>
        {m.pecError === null ? null : (
          <>
            <dt>PEC error</dt>
            <dd>
              {m.pecError}
              {m.pecErrorAt === null ? '' : ` (${whenMs(m.pecErrorAt)})`}
            </dd>
          </>
        )}
      </dl>
      {props.receipts.length === 0 ? null : (
        <DataTable
          columns={[
            'Receipt',
            'Recipient',
            "Provider's time",
            'Read',
            'Issuer',
            'Error',
            { label: 'Size', num: true },
            'Original',
          ]}
        >
          {props.receipts.map((receipt) => (
            <tr>
              <td>{receipt.receiptType}</td>
              <td>{receipt.recipient ?? ''}</td>
              <td>{receipt.issuedAt === null ? '' : whenMs(receipt.issuedAt)}</td>
              <td>{whenMs(receipt.receivedAt)}</td>
              <td>{receipt.issuer ?? ''}</td>
              <td>{[receipt.error, receipt.errorDetail].filter((part) => part !== null).join(': ')}</td>
              <td class="num">
                {kib(receipt.sizeBytes)}
                {receipt.complete ? '' : ' (first part only)'}
              </td>
              <td>
                <a href={`${base}/pec/${receipt.receiptId}`} download>
                  download .eml
                </a>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
