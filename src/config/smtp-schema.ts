/** The configuration's [smtp] section: SMTP submission (ingress/smtp). */
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { parseListenAddress } from './listen-address.js';
import { parseNetwork } from './network.js';
import { defaultSessionProcesses } from './session-processes.js';

const positiveInt = z.number().int().positive();

/** A listen address, or empty for "no listener". */
const optionalListen = z.string().refine((text) => text === '' || parseListenAddress(text) !== null, {
  message: 'expected host:port (e.g. 127.0.0.1:2525), or empty for none',
});

/** An unauthenticated client network mapped to a tenant (and optionally an account). */
const trustedNetwork = z
  .object({
    network: z.string().refine((text) => parseNetwork(text) !== null, {
      message: 'expected an address or CIDR block, e.g. 10.0.0.0/8 or fd00::/8',
    }),
    tenant_id: z.string().min(1),
    account_id: z.string().min(1).optional(),
  })
  .strict();

export const smtpSection = z
  .object({
    listen: optionalListen.default('127.0.0.1:2525'),
    tls_listen: optionalListen.default(''),
    tls_cert_file: z.string().default(''),
    tls_key_file: z.string().default(''),
    hostname: z
      .string()
      .regex(/^$|^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/, 'a host name')
      .default(''),
    allow_insecure_auth: z.boolean().default(false),
    max_message_bytes: positiveInt.default(25 * 1024 * 1024),
    max_header_bytes: positiveInt.min(1024).default(256 * 1024),
    max_recipients: positiveInt.min(1).max(100_000).default(1000),
    max_connections: positiveInt.max(100_000).default(1000),
    max_connections_per_client: positiveInt.default(100),
    session_processes: z
      .number()
      .int()
      .min(0)
      .max(64)
      .default(() => defaultSessionProcesses(availableParallelism())),
    command_timeout_seconds: positiveInt.default(300),
    data_timeout_seconds: positiveInt.default(600),
    greeting_delay_ms: z.number().int().min(0).max(30_000).default(0),
    add_received_header: z.boolean().default(true),
    auth_max_failures: positiveInt.default(10),
    auth_failure_window_seconds: positiveInt.default(300),
    trusted_networks: z.array(trustedNetwork).max(1000).default([]),
  })
  .strict()
  .superRefine((smtp, ctx) => {
    if ((smtp.tls_cert_file === '') !== (smtp.tls_key_file === '')) {
      ctx.addIssue({
        code: 'custom',
        path: [smtp.tls_cert_file === '' ? 'tls_cert_file' : 'tls_key_file'],
        message: 'tls_cert_file and tls_key_file go together',
      });
    }
    if (smtp.tls_listen !== '' && smtp.tls_cert_file === '') {
      ctx.addIssue({
        code: 'custom',
        path: ['tls_listen'],
        message: 'an implicit-TLS listener needs tls_cert_file and tls_key_file',
      });
    }
  })
  .prefault({});
