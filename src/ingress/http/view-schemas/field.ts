/**
 * Building blocks of the response schemas: a field is a zod schema with its
 * description and one realistic example, which become the OpenAPI document's
 * `description` and `examples`. These schemas only document: nothing parses a
 * response with them at run time (the test does, against the real answers).
 */
import { z } from 'zod';

/** `schema` described, with `example` as its one example. */
export const field = <T extends z.ZodType>(schema: T, description: string, example: z.output<T>): T =>
  schema.meta({ description, examples: [example] });

/** An instant in epoch seconds (the API's `_ts` fields). */
export const seconds = (description: string, example = 1764000061) =>
  field(z.number().int(), `${description}, epoch seconds`, example);
export const nullableSeconds = (description: string, example: number | null = 1764000061) =>
  field(z.number().int().nullable(), `${description}, epoch seconds; null when none`, example);
/** An instant as ISO 8601 text in UTC (the contracts' `_at` fields). */
export const isoInstant = (description: string, example = '2025-11-24T16:00:00.000Z') =>
  field(z.string(), `${description}, ISO 8601 UTC`, example);
export const nullableText = (description: string, example: string | null) =>
  field(z.string().nullable(), description, example);

/** `{"ok": true}`: the request was applied (committed). */
export const ok = field(z.literal(true), 'Always true: the request was applied (committed).', true);

/** The answer of a route that only applies a change. */
export const okOnly = z.object({ ok });
