/**
 * A rejected message as POST /add-messages answers it: `index`, `id` and `reason`
 * as genro clients have always read them, then the stable `code`.
 */
import type { Rejection, RejectionCode } from '../../../core/message/index.js';

export interface RejectionView {
  index: number;
  id: string | null;
  reason: string;
  code: RejectionCode;
}

export function viewRejection(rejection: Rejection): RejectionView {
  return { index: rejection.index, id: rejection.id, reason: rejection.reason, code: rejection.code };
}
