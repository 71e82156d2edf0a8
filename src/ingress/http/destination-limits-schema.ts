/** An account's per-destination limits as the API spells them (`destination_limits` of POST /account), and as the core reads them. */
import { z } from 'zod';
import { MAX_DESTINATION_DOMAINS, MAX_DESTINATION_LIMITS, type DestinationLimit } from '../../core/account/index.js';
import { domainPattern } from './identifier.js';

const limit = (window: string, example: number) =>
  z
    .number()
    .int()
    .positive()
    .max(10_000_000)
    .nullable()
    .optional()
    .meta({
      description: `At most this many messages per UTC ${window} to these domains through this account; null or absent: no limit.`,
      examples: [example],
    });

const destinationLimit = z
  .object({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9._*-]+$/, 'letters, digits, and . _ * -')
      .optional()
      .meta({
        description:
          'How waiting reasons, usage and fleet counters name it; unique in the account. Default: its first domain.',
        examples: ['gmail.com'],
      }),
    domains: z
      .array(domainPattern)
      .min(1)
      .max(MAX_DESTINATION_DOMAINS)
      .meta({
        description:
          'The recipient domains it holds: a domain, or `*.example.com` for it and its subdomains. A domain in two rules is held by the first.',
        examples: [['gmail.com', 'googlemail.com']],
      }),
    limit_per_minute: limit('minute', 100),
    limit_per_hour: limit('hour', 3000),
    limit_per_day: limit('day', 20000),
    max_connections: z
      .number()
      .int()
      .min(1)
      .max(100)
      .nullable()
      .optional()
      .meta({
        description:
          "Sends to these domains in flight at once through this account, at most (fleet-wide, shared out among the nodes); null or absent: the account's own.",
        examples: [2],
      }),
  })
  .strict();

export const destinationLimitsBody = z
  .array(destinationLimit)
  .max(MAX_DESTINATION_LIMITS)
  .optional()
  .meta({
    description: `Limits per recipient domain or group of domains, in the same UTC windows as the account's and fleet-wide like them: a message waits (\`destination_limited\`) until every limited destination among its recipients has budget, then goes once, whole, and counts against each. At most ${MAX_DESTINATION_LIMITS}; [] clears them. Default none.`,
    examples: [[{ name: 'gmail.com', domains: ['gmail.com', 'googlemail.com'], limit_per_minute: 100 }]],
  });

export const toDestinationLimits = (body: z.infer<typeof destinationLimitsBody>): DestinationLimit[] | undefined =>
  body?.map((rule) => ({
    name: rule.name ?? rule.domains[0]!.toLowerCase(),
    domains: rule.domains.map((domain) => domain.toLowerCase()),
    limitPerMinute: rule.limit_per_minute ?? null,
    limitPerHour: rule.limit_per_hour ?? null,
    limitPerDay: rule.limit_per_day ?? null,
    maxConnections: rule.max_connections ?? null,
  }));
