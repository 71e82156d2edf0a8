/** The confirmation step of removing a suppressed address: what it will do, in words, and the form that does it. */
import { CsrfField, Layout } from '../layout.js';
import type { ConsoleSession } from '../session-store.js';
import { CONSOLE_PATH } from '../session.js';

export function RemoveSuppressionPage(props: { session: ConsoleSession; tenant: string; address: string }) {
  const back = `${CONSOLE_PATH}/suppressions?${new URLSearchParams({ tenant: props.tenant }).toString()}`;
  return (
    <Layout title="Remove a suppression: confirm" session={props.session} current="suppressions">
      <form method="post" action={`${CONSOLE_PATH}/suppressions/remove`} class="panel">
        <CsrfField session={props.session} />
        <input type="hidden" name="tenant" value={props.tenant} />
        <input type="hidden" name="address" value={props.address} />
        <p>
          Remove {props.address} from tenant {props.tenant}'s suppression list: mail to it is sent again.
        </p>
        <p class="muted">The action is recorded in the audit log under your sign-in.</p>
        <div class="actions">
          <button type="submit" class="danger">
            Remove
          </button>
          <a class="button secondary" href={back}>
            Cancel
          </a>
        </div>
      </form>
    </Layout>
  );
}
