/** An error as a page: what went wrong, in the API's own words, and a way back. */
import { Layout } from '../layout.js';
import type { ConsoleSession } from '../session-store.js';
import { CONSOLE_PATH } from '../session.js';

/** `code`: the API's stable error code, kept on the page for scripts and support (not shown). */
export function ErrorPage(props: { session: ConsoleSession | null; title: string; message: string; code: string }) {
  return (
    <Layout title={props.title} session={props.session}>
      <p class="error-box" role="alert" data-code={props.code}>
        {props.message}
      </p>
      <p>
        <a href={`${CONSOLE_PATH}/messages`}>Back to messages</a>
      </p>
    </Layout>
  );
}
