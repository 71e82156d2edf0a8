/** The face of src/nats: what the rest of the product uses of it. */
export { jsonCodec } from './codec.js';
export type { JsonCodec } from './codec.js';
export { NatsConnectionLifecycle } from './connection.js';
export type { NatsConnectionHold } from './connection.js';
export { bucketKeys } from './kv-keys.js';
export { managerOf } from './jetstream-manager.js';
export type { BucketKeys } from './kv-keys.js';
export { isNoResponders, isNotFound, isStreamNotFound, isWrongLastSequence } from './nats-errors.js';
export { createJetStreamObjects } from './jetstream-objects.js';
export type { JetStreamObjectSettings } from './jetstream-objects.js';
