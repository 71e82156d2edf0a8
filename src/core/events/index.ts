/** The face of src/core/events: what the rest of the product uses of it. */
export { changeRecorder } from './change-record.js';
export type { ChangeRecord } from './change-record.js';
export { parseCommandBody, parseCommandSubject } from './inbound.js';
export type { CommandHandler, CommandName, CommandRequest, InboxStore } from './inbound.js';
export { advances, affectsLatest, latestKey, merge } from './latest-state.js';
export type { LatestEvent, LatestState } from './latest-state.js';
export type { MirrorRecord, MirrorStatus, MirrorStore, PendingEvent } from './mirror.js';
