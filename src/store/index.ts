/** The face of src/store: what the rest of the product uses of it. */
export * from './sqlite-store.js';
export * from './store-service.js';
export { lockDataDir } from './data-dir-lock.js';
export { rotateStoredKeys, type KeyRotationCounts } from './key-rotation.js';
