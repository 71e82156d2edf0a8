/** The face of src/security: what the rest of the product uses of it. */
export { openDaemonKeys } from './daemon-keys.js';
export type { DaemonKeys } from './daemon-keys.js';
export { ADMIN_TOKEN_FILE, SECRET_KEY_FILE } from './key-material.js';
export { NEXT_KEY_FILE, PREVIOUS_KEYS_FILE } from './key-files.js';
export {
  beginConfiguredRotation,
  beginFileRotation,
  finishFileRotation,
  readKeyFile,
  type RotationStart,
} from './key-rotation.js';
export { SIGNATURE_HEADER, newSigningSecret, signReport } from './report-signature.js';
export { createBodySeal } from './body-seal.js';
export { sealingKeys, type SealingMaterial } from './sealing-keys.js';
export { dkimKeyMaker } from './dkim-keys.js';
export type { KeyEncryptionKey } from './body-seal.js';
export { createFileLinks } from './file-links.js';
