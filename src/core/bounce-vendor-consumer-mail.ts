/**
 * (to be written) The documented bounce wording of more mailbox providers, for bounce-vendor-wording.ts.
 * Data only; every pattern bounded (no backtracking on hostile text).
 */
import type { BounceReason } from './bounce-reason.js';

export const CONSUMER_MAIL_WORDING: ReadonlyArray<readonly [BounceReason, RegExp]> = [];
