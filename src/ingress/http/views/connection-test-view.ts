/** A connection test as POST /account/{id}/test answers it: the API's snake_case, durations in ms. */
import type { ConnectionTestResult } from '../../../core/account/index.js';

export function viewConnectionTest(result: ConnectionTestResult) {
  return {
    ok: result.ok,
    failed_step: result.failedStep,
    reason: result.reason,
    stage: result.stage,
    error_code: result.errorCode,
    duration_ms: result.durationMs,
    tls:
      result.tls === null
        ? null
        : {
            version: result.tls.version,
            cipher: result.tls.cipher,
            certificate: result.tls.certificate,
            certificate_error: result.tls.certificateError,
          },
    steps: result.steps.map((step) => ({
      step: step.step,
      ok: step.ok,
      reply_code: step.reply?.replyCode ?? null,
      enhanced_status: step.reply?.enhancedStatus ?? null,
      text: step.reply?.text ?? null,
      duration_ms: step.durationMs,
    })),
  };
}

export type ConnectionTestView = ReturnType<typeof viewConnectionTest>;
