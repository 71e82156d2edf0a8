/**
 * One message: its state fields, why it still waits, its timeline with the
 * relay's replies, bounce and report status, its PEC receipts, the headers,
 * and its actions.
 */
import {
  type MessageDetail,
  type MessageTimelineEvent,
  type MessageStatus,
  type WaitingExplanation,
  PRIORITY_LABELS,
  waitingSentence,
} from '../../../core/message/index.js';
import type { PecReceiptListing } from '../../../core/pec/index.js';
import type { SyncStatus } from '../../../core/report/index.js';
import { statusClass, whenMs } from '../format.js';
import { Layout } from '../layout.js';
import type { ConsoleSession } from '../session-store.js';
import { messageHref } from './messages.js';
import { PecPanel } from './pec-panel.js';
import { DataTable } from './data-table.js';

export interface MessagePageProps {
  session: ConsoleSession;
  message: MessageDetail;
  status: MessageStatus;
  events: MessageTimelineEvent[];
  pecReceipts: PecReceiptListing[];
  why: WaitingExplanation;
  headers: { source: 'smtp' | 'http'; text: string } | null;
  /** Fleet mode: the other node that holds the message (its actions are offered on that node's console); null for this node's. */
  node?: string | null;
  sync: SyncStatus | null;
  suspendedBatch: boolean | null;
  /** It waits for a later attempt (a retry backoff or a scheduled time) that "retry now" can bring forward. */
  retryable: boolean;
  notice: string | null;
}

function Fields(props: { rows: Array<[string, string | number | null | undefined]> }) {
  return (
    <dl class="fields">
      {props.rows
        .filter(([, value]) => value !== null && value !== undefined && value !== '')
        .map(([name, value]) => (
          <>
            <dt>{name}</dt>
            <dd>{String(value)}</dd>
          </>
        ))}
    </dl>
  );
}

function Why(props: { why: WaitingExplanation; message: MessageDetail }) {
  if (!props.why.waiting) return <p>Not waiting: its outcome is recorded.</p>;
  return (
    <>
      <ul>
        {props.why.reasons.map((reason) => (
          <li>
            <strong>{reason.code.replace(/_/g, ' ')}</strong>: {waitingSentence(reason, props.message)}
            {reason.untilAt === null ? '' : ` (until ${whenMs(reason.untilAt)})`}
          </li>
        ))}
      </ul>
      <p class="muted">Given up at {whenMs(props.why.expiresAt)} if still not sent.</p>
    </>
  );
}

function Timeline(props: { events: MessageTimelineEvent[] }) {
  if (props.events.length === 0) return <p>No events recorded.</p>;
  return (
    <DataTable columns={['When', 'Event', { label: 'Attempt', num: true }, 'Reply', 'Text']}>
      {props.events.map((event) => (
        <tr>
          <td>{whenMs(event.at)}</td>
          <td>{event.type}</td>
          <td class="num">{event.attempt}</td>
          <td>{[event.replyCode, event.enhancedStatus].filter((part) => part !== null).join(' ')}</td>
          <td>{event.text ?? ''}</td>
        </tr>
      ))}
    </DataTable>
  );
}

/** `suspendedBatch` null: not known (the message no longer waits), so both batch actions are offered. */
function Actions(props: {
  message: MessageDetail;
  status: MessageStatus;
  suspendedBatch: boolean | null;
  retryable: boolean;
}) {
  const base = messageHref(props.message);
  const final = props.status === 'sent' || props.status === 'error' || props.status === 'bounced';
  return (
    <div class="actions">
      {props.retryable ? (
        <a class="button" href={`${base}/confirm/retry-now`}>
          Retry now…
        </a>
      ) : null}
      {final ? (
        <a class="button" href={`${base}/confirm/resend`}>
          Resend…
        </a>
      ) : null}
      {props.status === 'sending' ? null : (
        <a class="button secondary" href={`${base}/confirm/delete`}>
          Delete…
        </a>
      )}
      {props.message.erasedAt !== null ? null : (
        <a class="button secondary" href={`${base}/confirm/erase`}>
          Erase personal data…
        </a>
      )}
      {props.message.batchCode === null || props.suspendedBatch === true ? null : (
        <a class="button secondary" href={`${base}/confirm/suspend-batch`}>
          Suspend batch {props.message.batchCode}…
        </a>
      )}
      {props.message.batchCode === null || props.suspendedBatch === false ? null : (
        <a class="button secondary" href={`${base}/confirm/activate-batch`}>
          Activate batch {props.message.batchCode}…
        </a>
      )}
    </div>
  );
}

export function MessagePage(props: MessagePageProps) {
  const m = props.message;
  const sync = props.sync;
  return (
    <Layout title={`Message ${m.clientId}`} session={props.session} current="messages" notice={props.notice}>
      <p>
        <span class={statusClass(props.status)}>{props.status}</span> {m.subject ?? ''}
      </p>
      {props.node ? null : (
        <Actions message={m} status={props.status} suspendedBatch={props.suspendedBatch} retryable={props.retryable} />
      )}
      <div class="grid">
        <section class="panel" aria-labelledby="state-heading">
          <h2 id="state-heading">State</h2>
          <Fields
            rows={[
              ['Node', props.node ?? null],
              ['Tenant', m.tenantId],
              ['Account', m.accountId],
              ['Batch', m.batchCode],
              ['Priority', PRIORITY_LABELS[m.priority]],
              ['Source', m.source],
              ['From', m.mailFrom],
              ['To', m.rcptTo.join(', ')],
              ['Message-ID', m.messageId],
              ['Size', `${m.sizeBytes} bytes`],
              ['Attempts', m.attempts],
              ['Accepted', whenMs(m.createdAt)],
              ['Updated', whenMs(m.updatedAt)],
              ['Next attempt', m.state === 'queued' || m.state === 'deferred' ? whenMs(m.nextAttemptAt) : null],
              ['Deferred', m.deferredAt === null ? null : whenMs(m.deferredAt)],
              ['Deferred because', m.deferredReason],
              ['Sent', m.sentAt === null ? null : whenMs(m.sentAt)],
              ['Failed', m.errorAt === null ? null : whenMs(m.errorAt)],
              ['Error', m.error],
              ['Last reply', [m.lastReplyCode, m.lastEnhancedStatus].filter((part) => part !== null).join(' ')],
              ['Refused recipients', m.refusedRecipients === null ? null : JSON.stringify(m.refusedRecipients)],
            ]}
          />
        </section>
        <section class="panel" aria-labelledby="why-heading">
          <h2 id="why-heading">Why is it still queued?</h2>
          <Why why={props.why} message={m} />
        </section>
        <section class="panel" aria-labelledby="bounce-heading">
          <h2 id="bounce-heading">Bounce and reports</h2>
          <Fields
            rows={[
              ['Bounce', m.bounceAt === null ? 'none recorded' : `${m.bounceType ?? ''} ${m.bounceCode ?? ''}`.trim()],
              ['Bounced at', m.bounceAt === null ? null : whenMs(m.bounceAt)],
              ['Bounce reason', m.bounceReason],
              [
                'Complaint',
                m.complaintAt === null ? null : `${m.complaintType ?? 'complaint'} at ${whenMs(m.complaintAt)}`,
              ],
              // The provider's side: what its webhooks said last, and its id of the message.
              [
                'Provider says',
                m.providerState === null
                  ? null
                  : `${m.providerState.replace('_', ' ')} at ${whenMs(m.providerStateAt ?? 0)}`,
              ],
              ['Provider message id', m.providerMessageId],
              ['Outcome reported', m.reportedAt === null ? 'not yet' : whenMs(m.reportedAt)],
              [
                'Bounce reported',
                m.bounceAt === null ? null : m.bounceReportedAt === null ? 'not yet' : whenMs(m.bounceReportedAt),
              ],
              [
                'Report loop',
                sync === null || sync.clientSyncUrl === null
                  ? 'no report endpoint: outcomes count as reported when they happen'
                  : sync.consecutiveFailures > 0
                    ? `failing (${sync.consecutiveFailures} in a row): ${sync.lastError ?? ''}`
                    : 'healthy',
              ],
              ['Last report round', sync === null || sync.lastSuccessAt === null ? null : whenMs(sync.lastSuccessAt)],
            ]}
          />
        </section>
      </div>
      <PecPanel message={m} receipts={props.pecReceipts} />
      <section aria-labelledby="timeline-heading">
        <h2 id="timeline-heading">Timeline</h2>
        <Timeline events={props.events} />
      </section>
      <section aria-labelledby="headers-heading">
        <h2 id="headers-heading">
          Headers{' '}
          {props.headers?.source === 'http' ? (
            <span class="muted">(as submitted over HTTP; the MIME headers are built at each delivery)</span>
          ) : null}
        </h2>
        <pre class="headers" tabindex={0}>
          {props.headers?.text ?? ''}
        </pre>
      </section>
    </Layout>
  );
}
