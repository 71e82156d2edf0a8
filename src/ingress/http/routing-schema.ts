/** A tenant's routing rule as the API spells it (`routes` of POST and PUT /tenant), and as the core reads it. */
import { z } from 'zod';
import type { RoutingRule } from '../../core/account/index.js';
import { domainPattern, identifier } from './identifier.js';

export const routeRule = z
  .object({
    match: z
      .object({
        sender_domains: z
          .array(domainPattern)
          .min(1)
          .max(100)
          .optional()
          .meta({
            description: "The sender's domain is one of these; `*.example.com` matches it and its subdomains.",
            examples: [['news.example.com']],
          }),
        batch_codes: z
          .array(z.string().min(1).max(128))
          .min(1)
          .max(100)
          .optional()
          .meta({ description: 'The batch code is one of these.', examples: [['newsletter-2026-12']] }),
        priorities: z
          .array(z.number().int().min(0).max(3))
          .min(1)
          .max(4)
          .optional()
          .meta({ description: 'The priority (0 immediate … 3 low) is one of these.', examples: [[3]] }),
        header: z
          .object({
            name: z
              .string()
              .min(1)
              .max(128)
              .meta({ description: 'The header name, in any case.', examples: ['X-Stream'] }),
            value: z
              .string()
              .max(998)
              .meta({ description: 'Its value, exactly.', examples: ['bulk'] }),
          })
          .strict()
          .optional()
          .meta({
            description: 'A header of the message has this value (its name in any case, the value exactly).',
            examples: [{ name: 'X-Stream', value: 'bulk' }],
          }),
      })
      .strict()
      .meta({
        description: 'What the message must have; every condition given must hold (none: every message).',
        examples: [{ batch_codes: ['newsletter'] }],
      }),
    account_id: identifier.meta({ description: 'The account such a message is sent through.', examples: ['bulk'] }),
  })
  .strict();

/** A rule as the API spells it, as the core reads it. */
export const toRoutingRule = (rule: z.output<typeof routeRule>): RoutingRule => ({
  match: {
    ...(rule.match.sender_domains === undefined
      ? {}
      : { senderDomains: rule.match.sender_domains.map((domain) => domain.toLowerCase()) }),
    ...(rule.match.batch_codes === undefined ? {} : { batchCodes: rule.match.batch_codes }),
    ...(rule.match.priorities === undefined ? {} : { priorities: rule.match.priorities }),
    ...(rule.match.header === undefined ? {} : { header: rule.match.header }),
  },
  accountId: rule.account_id,
});

/** POST /tenant/{id}/routes/test: a message as its routing reads it. */
export const routeTestBody = z
  .object({
    from: z
      .string()
      .min(3)
      .max(998)
      .meta({ description: 'The sender address.', examples: ['news@news.example.com'] }),
    batch_code: z
      .string()
      .min(1)
      .max(128)
      .nullable()
      .optional()
      .meta({ description: 'Its batch code.', examples: ['newsletter'] }),
    priority: z
      .number()
      .int()
      .min(0)
      .max(3)
      .optional()
      .meta({ description: 'Its priority, 0 to 3. Default 2.', examples: [3] }),
    headers: z
      .record(z.string().min(1).max(128), z.string().max(998))
      .optional()
      .meta({ description: 'Its headers, by name.', examples: [{ 'X-Stream': 'bulk' }] }),
    account_id: identifier
      .optional()
      .meta({ description: 'The account it names, if any (rules then do not apply).', examples: ['main'] }),
  })
  .strict()
  .transform((body) => ({
    mailFrom: body.from,
    batchCode: body.batch_code ?? null,
    priority: body.priority ?? 2,
    headers: Object.entries(body.headers ?? {}).map(([name, value]) => ({ name, value })),
    accountId: body.account_id ?? null,
  }));
