/** The sign-in form: a tenant API key or the admin token, posted once and never shown again. */
import { Layout } from '../layout.js';
import { CONSOLE_PATH } from '../session.js';

export function SignInPage(props: { error?: string | null }) {
  return (
    <Layout title="Sign in" session={null}>
      <div class="signin panel">
        {props.error ? (
          <p class="error-box" role="alert" id="sign-in-error">
            {props.error}
          </p>
        ) : null}
        <form method="post" action={`${CONSOLE_PATH}/sign-in`}>
          <label for="token">Tenant API key or admin token</label>
          <input
            id="token"
            name="token"
            type="password"
            autocomplete="current-password"
            required
            autofocus
            aria-describedby={props.error ? 'sign-in-error token-help' : 'token-help'}
          />
          <p id="token-help" class="muted">
            The key is checked once and not kept: the session lives in this daemon and ends when you sign out, after 30
            minutes idle, or after 12 hours.
          </p>
          <button type="submit">Sign in</button>
        </form>
      </div>
    </Layout>
  );
}
