/** The page shell: landmarks, a skip link, the navigation, and the one-time notice. */
import type { Child } from 'hono/jsx';
import { raw } from 'hono/html';
import type { ConsoleSession } from './session-store.js';
import { CONSOLE_PATH } from './session.js';

export interface LayoutProps {
  title: string;
  session: ConsoleSession | null;
  /** Which navigation entry is this page's. */
  current?: 'overview' | 'messages' | 'accounts' | 'tenants' | 'suppressions';
  notice?: string | null;
  children?: Child;
}

const NAV = [
  { key: 'overview', href: `${CONSOLE_PATH}/overview`, label: 'Overview', admin: false },
  { key: 'messages', href: `${CONSOLE_PATH}/messages`, label: 'Messages', admin: false },
  { key: 'accounts', href: `${CONSOLE_PATH}/accounts`, label: 'Accounts', admin: false },
  { key: 'tenants', href: `${CONSOLE_PATH}/tenants`, label: 'Tenants', admin: true },
  { key: 'suppressions', href: `${CONSOLE_PATH}/suppressions`, label: 'Suppressions', admin: true },
] as const;

export const who = (session: ConsoleSession): string =>
  session.principal.kind === 'admin' ? 'admin' : `tenant ${session.principal.tenantId}`;

export function Layout(props: LayoutProps) {
  const { session } = props;
  const isAdmin = session?.principal.kind === 'admin';
  return (
    <>
      {raw('<!DOCTYPE html>')}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{`${props.title} · mailproxy`}</title>
          <link rel="stylesheet" href={`${CONSOLE_PATH}/assets/console.css`} />
        </head>
        <body>
          <a class="skip" href="#main">
            Skip to content
          </a>
          <header class="top">
            <span class="brand">mailproxy</span>
            {session === null ? null : (
              <>
                <nav aria-label="Console">
                  <ul>
                    {NAV.filter((entry) => isAdmin || !entry.admin).map((entry) => (
                      <li>
                        <a href={entry.href} aria-current={props.current === entry.key ? 'page' : undefined}>
                          {entry.label}
                        </a>
                      </li>
                    ))}
                  </ul>
                </nav>
                <form method="post" action={`${CONSOLE_PATH}/sign-out`} class="signout">
                  <input type="hidden" name="_csrf" value={session.csrfToken} />
                  <span class="who">{who(session)}</span> <button type="submit">Sign out</button>
                </form>
              </>
            )}
          </header>
          <main id="main" tabindex={-1}>
            <h1>{props.title}</h1>
            {props.notice ? (
              <p class="notice" role="status">
                {props.notice}
              </p>
            ) : null}
            {props.children}
          </main>
        </body>
      </html>
    </>
  );
}

/** The session's CSRF token as the hidden field every console form carries. */
export function CsrfField(props: { session: ConsoleSession }) {
  return <input type="hidden" name="_csrf" value={props.session.csrfToken} />;
}
