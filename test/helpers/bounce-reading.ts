/**
 * How the bounce-reason unit tests read one diagnostic as the parser does: its codes found, the
 * remote server's own words first (core/bounce-classify.ts findCodes, then reasonIn).
 */
import { findCodes, reasonIn, type BounceReason } from '../../src/core/bounce-classify.js';

export function readReason(diagnostic: string): BounceReason | null {
  const { status, replyCode, remoteWords } = findCodes(diagnostic);
  return reasonIn({ status, replyCode, primary: remoteWords, texts: [diagnostic] });
}

/** What the diagnostic's reply code and enhanced status say with no words at all. */
export function reasonOfCodesAlone(diagnostic: string): BounceReason | null {
  const { status, replyCode } = findCodes(diagnostic);
  return reasonIn({ status, replyCode, texts: [] });
}
