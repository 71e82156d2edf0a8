/** The face of src/core/message: what the rest of the product uses of it. */
export type { IdsOutcome, MessageAdmin, MessageDetail, MessageTimelineEvent } from './admin.js';
export { framedParts, partsOf } from './body-objects.js';
export type { BodyObjects, BodyStoreHealth, BodyObjectRows } from './body-objects.js';
export { FILES_PATH, fileUrl, offloadNotice, offloadPlan } from './attachment-offload.js';
export { createFileDownloads } from './file-downloads.js';
export type { FileDownloads, FileFinder, FileRecord, OpenedFile } from './file-downloads.js';
export type {
  AttachmentOffload,
  FileLink,
  FileLinks,
  MessageOffload,
  OffloadedFile,
  OffloadedFiles,
} from './attachment-offload.js';
export { BULK_ACTIONS, createBulkCommands } from './bulk.js';
export type { BulkAction, BulkCommands, BulkPreview, BulkRequest, BulkResult } from './bulk.js';
export {
  CLIENT_ID_CHARACTERS,
  CLIENT_ID_MAX_LENGTH,
  CLIENT_ID_RULE,
  MAIL_ID_FIELD,
  MAIL_ID_HEADER,
  isClientId,
} from './client-id.js';
export { SHARED_COMMANDS, createMessageCommands } from './commands.js';
export type { MessageCommands } from './commands.js';
export type { MessageHeaders } from './headers.js';
export { PRIORITY_LABELS, headerValue, parsePriority, toPriority } from './message.js';
export type {
  AttachmentSpec,
  HandoffState,
  MessageContent,
  MessagePayload,
  NewMessage,
  Priority,
  PriorityLabel,
} from './message.js';
export type { OldestDue, QueueCount, QueueStatusStore, WaitingStatus } from './queue-status.js';
export type {
  ClaimedMessage,
  ClaimRequest,
  EnqueueResult,
  MessageQueue,
  MessageSpool,
  RecordedOutcome,
} from './queue.js';
export type { BodyBytes, BodySeal, DataKey, SealedBody, SealedFields } from './sealed-body.js';
export type { ErasureCounts, ErasurePending, ErasureStore, ErasureTarget } from './erasure.js';
export type { ErasureRequest } from './erase-command.js';
export { REJECTION_CODES, refusal, rejection } from './rejection.js';
export type { Rejection, RejectionCode } from './rejection.js';
export { MESSAGE_STATUSES, messageStatus } from './search.js';
export { addressTerm, blindTextQuery, searchTerms } from './blind-search.js';
export type { PersonalFields } from './blind-search.js';
export { newSealedEnvelope, openEnvelope, sealEnvelope } from './envelope-seal.js';
export type { SealedEnvelope } from './envelope-seal.js';
export { sealedWhereRead } from './sealed-where-read.js';
export type { SealingKeys } from './sealed-where-read.js';
export type {
  MessageCursor,
  MessageFilter,
  MessageQuery,
  MessageSearch,
  MessageStatus,
  MessageSummary,
} from './search.js';
export type { MessageSelection, SelectedMessage, Selection } from './selection.js';
export { createSubmissionService } from './submission-service.js';
export type { SubmissionItem, SubmissionResult, SubmissionService } from './submission-service.js';
export { THROUGHPUT_OUTCOMES, throughputSeries } from './throughput.js';
export type { ThroughputCount, ThroughputOutcome, ThroughputSeries, ThroughputStore } from './throughput.js';
export type { WaitingCode, WaitingExplanation, WaitingReason } from './waiting-reasons.js';
export type { MessageRead } from './message-read.js';
export { NO_PAUSE_REASON, waitingSentence } from './waiting-words.js';
export type { WaitingSubject } from './waiting-words.js';
