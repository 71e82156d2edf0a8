/** The face of src/security: what the rest of the product uses of it. */
export { openDaemonKeys } from './daemon-keys.js';
export type { DaemonKeys } from './daemon-keys.js';
export { ADMIN_TOKEN_FILE, SECRET_KEY_FILE } from './key-material.js';
export { SIGNATURE_HEADER, newSigningSecret, signReport } from './report-signature.js';
export { createBodySeal } from './body-seal.js';
export type { KeyEncryptionKey } from './body-seal.js';
