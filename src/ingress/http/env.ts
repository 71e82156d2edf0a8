/** The per-request variables routes can rely on. */
import type { Principal } from '../../core/principal.js';

export interface HttpEnv {
  Variables: {
    principal: Principal;
    requestId: string;
    /** http.max_body_bytes, for requestBody(). */
    maxBodyBytes: number;
  };
}
