/** The face of src/dns: what the DNS says of a sending domain, asked of the configured servers. */
export { createDomainDnsReader } from './domain-dns.js';
export { createDomainWatch } from './domain-watch.js';
export type { DomainWatch, FailingDomain } from './domain-watch.js';
