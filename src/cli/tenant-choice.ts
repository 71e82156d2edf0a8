/**
 * Which tenant a tenant-scoped verb acts on when --tenant is not given: the
 * daemon's only tenant. With none or several the operator must choose, and the
 * message names the choice. A tenant key needs no choice: the API implies it.
 */
import type { ApiClient } from './api-client.js';
import type { TenantList } from './answers.js';
import { cliError, failed, ok, type Result } from './cli-error.js';

/** How many tenant ids an "several tenants" message names before it counts the rest. */
const NAMED = 10;

/** The tenant to send as `tenant_id`; undefined when the token is a tenant key (which implies its tenant). */
export async function chooseTenant(client: ApiClient, given: string | undefined): Promise<Result<string | undefined>> {
  if (given !== undefined) return ok(given);
  const listed = await client.request<TenantList>('GET', '/tenants');
  if (!listed.ok) return listed.error.code === 'FORBIDDEN' ? ok(undefined) : listed;
  const ids = (listed.value.tenants ?? []).map((tenant) => tenant.id);
  if (ids.length === 1) return ok(ids[0]);
  if (ids.length === 0)
    return failed(cliError('TENANT_REQUIRED', 'no tenant yet: add one with `mailproxy tenants add ID`'));
  const named =
    ids.length <= NAMED ? ids.join(', ') : `${ids.slice(0, NAMED).join(', ')} and ${ids.length - NAMED} more`;
  return failed(cliError('TENANT_REQUIRED', `several tenants: ${named}; pass --tenant`));
}
