/** The per-request variables of the console's routes. */
import type { ConsoleSession } from './session-store.js';

export interface ConsoleEnv {
  Variables: {
    requestId: string;
    /** Null before sign-in (only the sign-in page and the stylesheet answer then). */
    session: ConsoleSession | null;
    /** The form limit, armed by bodyLimit() for readForm(). */
    maxBodyBytes: number;
  };
}
