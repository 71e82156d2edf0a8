export { type Config } from './schema.js';
export { parseConfig } from './parse-config.js';
export { loadConfig } from './load-config.js';
export { listEnvKeys } from './env-overrides.js';
export {
  parseListenAddress,
  formatListenAddress,
  isWildcard,
  localHttpUrl,
  type ListenAddress,
} from './listen-address.js';
export { redactConfig } from './redact.js';
export { daemonSettings, type DaemonSettings } from './settings.js';
