/** The face of src/core/tenant: what the rest of the product uses of it. */
export { createAuthenticator } from './authenticator.js';
export type { Authenticator } from './authenticator.js';
export { createFailureThrottle } from './failure-throttle.js';
export { requireAdmin, scopeTenant, scopeTenantOrAll } from './principal.js';
export type { Principal } from './principal.js';
export { SHARED_SUPPRESSION_WRITES, createSuppressionService } from './suppression-service.js';
export type { SuppressionEntry, SuppressionRepository, SuppressionService } from './suppression-service.js';
export { SHARED_TENANT_WRITES, createTenantService } from './tenant-service.js';
export type { CommandContext, IssuedKey, TenantService } from './tenant-service.js';
export type { ClientAuth, Tenant } from './tenant.js';
export { SHARED_DOMAIN_WRITES, checkDomain, createSendingDomainService } from './sending-domain-service.js';
export type { SendingDomainService } from './sending-domain-service.js';
export { dkimSigners } from './sending-domain.js';
export type { DkimKeyMaker, DkimSigner, SendingDomain } from './sending-domain.js';
export type { DomainDns, DomainDnsReader, FailingDomain } from './domain-check.js';
