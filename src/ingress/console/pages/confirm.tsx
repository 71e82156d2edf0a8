/** The confirmation step of an action: what it will do, in words, and a form that does it (POST + CSRF token). */
import type { MessageDetail } from '../../../core/message/index.js';
import { CsrfField, Layout } from '../layout.js';
import type { ConsoleSession } from '../session-store.js';
import { messageHref } from './messages.js';

export const MESSAGE_ACTIONS = ['resend', 'retry-now', 'delete', 'erase', 'suspend-batch', 'activate-batch'] as const;
export type MessageAction = (typeof MESSAGE_ACTIONS)[number];

export function actionSentence(
  action: MessageAction,
  message: Pick<MessageDetail, 'clientId' | 'batchCode' | 'tenantId'>,
): string {
  switch (action) {
    case 'resend':
      return `Send message ${message.clientId} again: it is queued as a new attempt and relayed with the same X-Genro-Mail-ID.`;
    case 'retry-now':
      return `Attempt message ${message.clientId} now instead of at its scheduled next attempt: it is handed to its relay as soon as its account allows.`;
    case 'delete':
      return `Delete message ${message.clientId} of tenant ${message.tenantId}. It will not be sent, and it disappears from searches.`;
    case 'erase':
      return `Erase the personal data of message ${message.clientId} of tenant ${message.tenantId}: its body's key is destroyed and its addresses, subject and texts are cleared, here and in its timeline, bounce and PEC records. It stays as a record of its status and times; if it is still waiting it is never sent. This cannot be undone.`;
    case 'suspend-batch':
      return `Suspend batch "${message.batchCode ?? ''}" of tenant ${message.tenantId}: none of its waiting messages is sent until the batch is activated.`;
    case 'activate-batch':
      return `Activate batch "${message.batchCode ?? ''}" of tenant ${message.tenantId}: its waiting messages are sent again.`;
  }
}

const BUTTON: Record<MessageAction, string> = {
  resend: 'Resend',
  'retry-now': 'Retry now',
  delete: 'Delete',
  erase: 'Erase personal data',
  'suspend-batch': 'Suspend batch',
  'activate-batch': 'Activate batch',
};

export function ConfirmPage(props: { session: ConsoleSession; message: MessageDetail; action: MessageAction }) {
  const href = messageHref(props.message);
  return (
    <Layout title={`${BUTTON[props.action]}: confirm`} session={props.session} current="messages">
      <form method="post" action={`${href}/${props.action}`} class="panel">
        <CsrfField session={props.session} />
        <p>{actionSentence(props.action, props.message)}</p>
        <p class="muted">The action is recorded in the audit log under your sign-in.</p>
        <div class="actions">
          <button type="submit" class={props.action === 'delete' || props.action === 'erase' ? 'danger' : undefined}>
            {BUTTON[props.action]}
          </button>
          <a class="button secondary" href={href}>
            Cancel
          </a>
        </div>
      </form>
    </Layout>
  );
}
