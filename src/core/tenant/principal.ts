/** Who is calling, and the access rules that follow from it. */
import { AppError } from '../app-error.js';

export type Principal = { kind: 'admin' } | { kind: 'tenant'; tenantId: string };

/**
 * Who presented a token to the HTTP API: a principal, or the holder of the
 * metrics token, which reads the metrics and nothing else. Kept out of
 * Principal so that no access rule written for admin-or-tenant can take it
 * for either.
 */
export type Caller = Principal | { kind: 'metrics' };

export function requireAdmin(principal: Principal): void {
  if (principal.kind !== 'admin') {
    throw new AppError('FORBIDDEN', 'this operation requires the admin token');
  }
}

/**
 * The tenant an operation acts on. A tenant key acts on its own tenant only;
 * naming another tenant answers NOT_FOUND so that a key cannot learn which
 * tenants exist. The admin token must name the tenant.
 */
/** Like scopeTenant, but the admin token naming no tenant means every tenant (null). */
export function scopeTenantOrAll(principal: Principal, requested: string | undefined): string | null {
  return principal.kind === 'admin' && requested === undefined ? null : scopeTenant(principal, requested);
}

export function scopeTenant(principal: Principal, requested: string | undefined): string {
  if (principal.kind === 'tenant') {
    if (requested !== undefined && requested !== principal.tenantId) {
      throw new AppError('NOT_FOUND', 'tenant not found', { details: { tenant_id: requested } });
    }
    return principal.tenantId;
  }
  if (requested === undefined) {
    throw new AppError('VALIDATION_FAILED', 'tenant_id is required', {
      details: [{ path: 'tenant_id', message: 'required when using the admin token' }],
    });
  }
  return requested;
}
