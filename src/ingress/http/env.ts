/** The per-request variables routes can rely on. */
import type { Principal } from '../../core/tenant/index.js';

export interface HttpEnv {
  Variables: {
    principal: Principal;
    /** Set instead of `principal` when the metrics token was presented (auth.ts lets it reach GET /metrics only). */
    metricsReader?: true;
    requestId: string;
    /** The body limit of this request's route (http.max_body_bytes, or webhooks.max_body_bytes), for requestBody(). */
    maxBodyBytes: number;
  };
}
