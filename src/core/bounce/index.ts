/** The face of src/core/bounce: what the rest of the product uses of it. */
export { isAutoReplySubject } from './auto-reply-subjects.js';
export type {
  BounceDisposition,
  BounceFindings,
  BounceLedger,
  BounceMessageListing,
  BouncePlan,
  BounceRecord,
  BounceStore,
  ComplaintRecord,
  MailboxItem,
  MailboxRecord,
  MailboxStatus,
  MatchedBy,
  MessageCandidate,
  RecipientFinding,
  SuppressionRecord,
  SuppressionSource,
} from './bounce.js';
export {
  bounceTypeOf,
  dsnOutcomeOf,
  findCodes,
  findReplyCode,
  findStatus,
  permanenceOf,
  reasonIn,
  reasonOf,
} from './classify.js';
export type { BounceReason } from './classify.js';
export { isListRefusalSubject, refusingListIn } from './list-server-refusals.js';
export { correlate, planBounce } from './plan.js';
export type { BouncePolicy } from './plan.js';
export { verpMessagePk, verpReturnPathOf, verpTemplateProblem } from './verp.js';
