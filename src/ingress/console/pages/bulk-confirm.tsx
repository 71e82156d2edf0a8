/** The confirmation step of a bulk action: how many messages the filter finds and the action reaches, a sample, and the form that acts. */
import type { BulkAction, BulkPreview } from '../../../core/message/index.js';
import { CsrfField, Layout } from '../layout.js';
import type { ConsoleSession } from '../session-store.js';
import { CONSOLE_PATH } from '../session.js';
import { messageHref, type MessageFilters } from './messages.js';

export const BULK_LABELS: Record<BulkAction, { verb: string; done: string }> = {
  resend: { verb: 'Resend', done: 'Resent' },
  'retry-now': { verb: 'Retry now', done: 'Retried now' },
  delete: { verb: 'Delete', done: 'Deleted' },
  suspend: { verb: 'Suspend', done: 'Held' },
  activate: { verb: 'Activate', done: 'Released' },
};

const WHAT: Record<BulkAction, string> = {
  resend: 'Sent, failed and bounced ones are queued for a new attempt, with the same X-Genro-Mail-ID.',
  'retry-now': 'Those waiting for a later attempt (a retry or a scheduled time) are attempted now.',
  delete:
    'They will not be sent and disappear from searches; a message being handed to its relay right now is left alone.',
  suspend:
    'The batch is suspended: none of its waiting messages is sent until it is activated (suspension holds a tenant or a batch, not single messages).',
  activate: "The batch's suspension is lifted: its held messages are sent again.",
};

/** The filter in words: `status error, batch "june"`. */
export function filterWords(filters: MessageFilters): string {
  const parts: string[] = [];
  if (filters.status !== '') parts.push(`status ${filters.status}`);
  if (filters.batch !== '') parts.push(`batch "${filters.batch}"`);
  if (filters.account !== '') parts.push(`account ${filters.account}`);
  if (filters.recipient !== '') parts.push(`recipient ${filters.recipient}`);
  if (filters.q !== '') parts.push(`words "${filters.q}"`);
  if (filters.from !== '') parts.push(`accepted from ${filters.from} UTC`);
  if (filters.to !== '') parts.push(`accepted before ${filters.to} UTC`);
  return parts.length === 0 ? 'any message' : parts.join(', ');
}

export function BulkConfirmPage(props: {
  session: ConsoleSession;
  action: BulkAction;
  filters: MessageFilters;
  allTenants: boolean;
  preview: BulkPreview;
  backHref: string;
}) {
  const { preview, filters, action } = props;
  const label = BULK_LABELS[action];
  const where = props.allTenants ? 'in every tenant' : filters.tenant === '' ? '' : `of tenant ${filters.tenant}`;
  return (
    <Layout title={`${label.verb} matching messages: confirm`} session={props.session} current="messages">
      <form method="post" action={`${CONSOLE_PATH}/bulk/${action}`} class="panel">
        <CsrfField session={props.session} />
        {Object.entries(filters).map(([name, value]) =>
          value === '' ? null : <input type="hidden" name={name} value={value} />,
        )}
        {props.allTenants ? <input type="hidden" name="all_tenants" value="1" /> : null}
        <p>
          <strong>
            {label.verb} {preview.applicable} message{preview.applicable === 1 ? '' : 's'} matching{' '}
            {filterWords(filters)} {where}?
          </strong>
        </p>
        <p>
          The filter finds {preview.matching}; {preview.applicable} of them are in a state this action applies to
          {preview.matching === preview.applicable
            ? '.'
            : `, the other ${preview.matching - preview.applicable} are left alone.`}{' '}
          {WHAT[action]}
        </p>
        {preview.sample.length === 0 ? null : (
          <p>
            For example:{' '}
            {preview.sample.map((m, index) => (
              <>
                {index === 0 ? '' : ', '}
                <a href={messageHref(m)}>{m.clientId}</a>
              </>
            ))}
          </p>
        )}
        <p class="muted">
          The action is recorded in the audit log under your sign-in. Messages that change state meanwhile are counted
          as not applicable.
        </p>
        <div class="actions">
          {preview.applicable === 0 ? (
            <p>Nothing to do.</p>
          ) : (
            <button type="submit" class={action === 'delete' ? 'danger' : undefined}>
              {label.verb} {preview.applicable} message{preview.applicable === 1 ? '' : 's'}
            </button>
          )}
          <a class="button secondary" href={props.backHref}>
            Cancel
          </a>
        </div>
      </form>
    </Layout>
  );
}
