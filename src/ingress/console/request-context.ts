/** What a console request acts as (the session's principal, audited as `<actor>@console`) and the notice it shows once. */
import type { Context } from 'hono';
import type { CommandContext } from '../../core/tenant/index.js';
import type { ConsoleEnv } from './env.js';
import { currentSession } from './session.js';

export const consoleContext = (c: Context<ConsoleEnv>): CommandContext => ({
  principal: currentSession(c).principal,
  correlationId: c.get('requestId'),
  via: 'console',
});

/** The one-time notice, taken from the session as the page shows it. */
export function takeNotice(c: Context<ConsoleEnv>): string | null {
  const session = currentSession(c);
  const notice = session.flash;
  session.flash = null;
  return notice;
}
