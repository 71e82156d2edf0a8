/**
 * What the fleet's configuration replica writes to its bucket and reads back: each object's value
 * with the key it was written under. Objects are loose: a field a later version adds is kept.
 */
import { z } from 'zod';
import type { ChangeRecord } from '../../core/events/index.js';
import type { ConfigKey, ConfigValue } from '../../core/fleet/index.js';
import { jsonCodec } from '../../nats/index.js';

const configKeySchema: z.ZodType<ConfigKey> = z.discriminatedUnion('kind', [
  z.looseObject({ kind: z.literal('tenant'), tenantId: z.string() }),
  z.looseObject({ kind: z.literal('account'), tenantId: z.string(), accountId: z.string() }),
  // An earlier version's key named the address in clear (`address`, no `digest`): such a value is
  // refused (configEntryOf skips it), its rows being in the table's earlier form.
  z.looseObject({ kind: z.literal('suppression'), tenantId: z.string(), digest: z.string() }),
  z.looseObject({ kind: z.literal('suspensions'), tenantId: z.string() }),
]);

const changeRecordSchema: z.ZodType<ChangeRecord> = z.looseObject({
  eventId: z.string(),
  occurredAt: z.number(),
  actor: z.string(),
  command: z.string(),
  tenantId: z.string(),
  aggregateType: z.enum(['tenant', 'account', 'suspension', 'message', 'suppression']),
  aggregateId: z.string(),
  eventType: z.string(),
  eventVersion: z.number(),
  data: z.record(z.string(), z.unknown()),
  correlationId: z.string().nullable(),
  node: z.string().optional(),
  auditOnly: z.boolean().optional(),
});

/** A configuration object in the fleet's bucket: its value with the key it was written under. */
export type StoredConfig = ConfigValue & { key: ConfigKey };
const storedConfigSchema: z.ZodType<StoredConfig> = z.looseObject({
  key: configKeySchema,
  rows: z.array(z.record(z.string(), z.unknown())).nullable(),
  origin: z.string(),
  changes: z.array(changeRecordSchema),
});
export const storedConfigCodec = jsonCodec(storedConfigSchema, 'configuration value');
