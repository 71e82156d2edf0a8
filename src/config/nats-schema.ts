/**
 * The configuration's NATS sections: the JetStream mirror with its command
 * consumer, and fleet mode, which runs over the same cluster.
 */
import { z } from 'zod';

const positiveInt = z.number().int().positive();

/** The JetStream mirror, its latest-state bucket and the command consumer; an empty url turns it off. */
export const natsSection = z
  .object({
    url: z.string().default(''),
    stream: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only')
      .default('MAILPROXY'),
    subject_prefix: z
      .string()
      .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'dot-separated tokens of letters, digits, _ and -')
      .default('mailproxy'),
    max_age_seconds: z
      .number()
      .int()
      .min(0)
      .default(30 * 24 * 3600),
    max_bytes: z.number().int().min(0).default(0),
    replicas: z.number().int().min(1).max(5).default(1),
    duplicate_window_seconds: z.number().int().min(120).max(86_400).default(120),
    kv_bucket: z
      .string()
      .regex(/^$|^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only, or empty for none')
      .default('mailproxy_latest'),
    max_in_flight: positiveInt.max(100_000).default(1000),
    batch_delay_ms: z.number().int().min(0).max(10_000).default(50),
    publisher_thread: z.boolean().default(true),
    commands: z.boolean().default(true),
    consumer: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only')
      .default('mailproxy-commands'),
    max_deliver: positiveInt.max(1000).default(5),
    ack_wait_seconds: positiveInt.max(3600).default(30),
    publish_timeout_seconds: z.number().positive().max(600).default(5),
    connect_timeout_seconds: z.number().positive().max(600).default(5),
  })
  .strict()
  .prefault({});

/** Fleet mode: several nodes sharing one configuration, limits and spool over the NATS cluster. */
export const fleetSection = z
  .object({
    enabled: z.boolean().default(false),
    node_id: z
      .string()
      .regex(/^$|^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only')
      .default(''),
    replicas: z.number().int().min(1).max(5).default(3),
    bucket: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only')
      .default('mailproxy_fleet'),
    heartbeat_seconds: z.number().positive().max(60).default(2),
    node_timeout_seconds: z.number().positive().max(3600).default(30),
    limit_chunk: positiveInt.default(100),
    spool: z.boolean().default(true),
    adopt_after_seconds: z
      .number()
      .positive()
      .max(7 * 24 * 3600)
      .default(120),
    spool_check_seconds: z.number().positive().max(3600).default(30),
  })
  .strict()
  .superRefine((fleet, ctx) => {
    if (fleet.adopt_after_seconds < fleet.node_timeout_seconds)
      ctx.addIssue({
        code: 'custom',
        path: ['adopt_after_seconds'],
        message: 'at least node_timeout_seconds: a node is adopted only once it is known to be lost',
      });
    if (fleet.enabled && fleet.node_id === '')
      ctx.addIssue({ code: 'custom', path: ['node_id'], message: 'a fleet node needs a node_id, unique in the fleet' });
    if (fleet.node_timeout_seconds < 2 * fleet.heartbeat_seconds) {
      ctx.addIssue({
        code: 'custom',
        path: ['node_timeout_seconds'],
        message: 'at least twice heartbeat_seconds, or one late heartbeat reads as a lost node',
      });
    }
  })
  .prefault({});
