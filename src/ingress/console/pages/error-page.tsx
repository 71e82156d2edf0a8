/** An error as a page: what went wrong, in the API's own words, and a way back. */
import { Layout } from '../layout.js';
import type { ConsoleSession } from '../session-store.js';
import { CONSOLE_PATH } from '../session.js';

export function ErrorPage(props: { session: ConsoleSession | null; title: string; message: string }) {
  return (
    <Layout title={props.title} session={props.session}>
      <p class="error-box" role="alert">
        {props.message}
      </p>
      <p>
        <a href={`${CONSOLE_PATH}/messages`}>Back to messages</a>
      </p>
    </Layout>
  );
}
