/** The face of src/outbox: what the rest of the product uses of it. */
export { createAckPublisher } from './ack-publisher.js';
export type { AckPublisher } from './ack-publisher.js';
export { createMirrorService } from './mirror-service.js';
export type { DaemonMirror } from './mirror-service.js';
