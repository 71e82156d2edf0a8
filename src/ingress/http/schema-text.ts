/**
 * JSON Schema -> words for people: a field's type ("string | null") and its
 * constraints ("length 1-255, pattern ^...$"), and an object's fields
 * flattened to dotted names (`attachments[].filename`). Used by /docs.
 */
import type { JsonSchema } from './openapi-document.js';

export interface FieldRow {
  name: string;
  type: string;
  required: boolean;
  constraints: string;
}

const asSchema = (value: unknown): JsonSchema | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonSchema) : null;
const variantsOf = (schema: JsonSchema): JsonSchema[] =>
  [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].map(asSchema).filter((variant) => variant !== null);

export function typeText(schema: JsonSchema): string {
  if (schema.$ref !== undefined) return schema.$ref.slice(schema.$ref.lastIndexOf('/') + 1);
  const variants = variantsOf(schema);
  if (variants.length > 0) return [...new Set(variants.map(typeText))].join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum !== undefined) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  if (Array.isArray(schema.type)) return schema.type.join(' | ');
  if (schema.type === 'array') {
    const items = asSchema(schema.items);
    const inner = items === null ? 'any' : typeText(items);
    return inner.includes(' ') ? `(${inner})[]` : `${inner}[]`;
  }
  const values = asSchema(schema.additionalProperties);
  if (schema.type === 'object' && values !== null && schema.properties === undefined)
    return `object of ${typeText(values)}`;
  return schema.type ?? 'any';
}

const range = (min: number | undefined, max: number | undefined, unit: string): string | null => {
  if (min === undefined && max === undefined) return null;
  if (min !== undefined && max !== undefined) return min === max ? `${unit} ${min}` : `${unit} ${min}-${max}`;
  return min === undefined ? `${unit} at most ${max}` : `${unit} at least ${min}`;
};

// zod's int() bounds every integer by the safe range; saying so on each field is noise.
const SAFE = Number.MAX_SAFE_INTEGER;

function ownConstraints(schema: JsonSchema): string[] {
  const bounds = [
    schema.minimum === undefined || schema.minimum === -SAFE ? null : `>= ${schema.minimum}`,
    typeof schema.exclusiveMinimum === 'number' ? `> ${schema.exclusiveMinimum}` : null,
    schema.maximum === undefined || schema.maximum === SAFE ? null : `<= ${schema.maximum}`,
    typeof schema.exclusiveMaximum === 'number' ? `< ${schema.exclusiveMaximum}` : null,
  ].filter((text) => text !== null);
  return [
    range(schema.minLength, schema.maxLength, 'length'),
    bounds.length === 0 ? null : bounds.join(', '),
    range(schema.minItems, schema.maxItems, 'items'),
    schema.pattern === undefined ? null : `pattern ${schema.pattern}`,
    schema.default === undefined ? null : `default ${JSON.stringify(schema.default)}`,
    schema.description ?? null,
  ].filter((text) => text !== null);
}

/** The constraints of the schema and of its variants and array items, each said once. */
export function constraintsText(schema: JsonSchema): string {
  const items = schema.type === 'array' ? asSchema(schema.items) : null;
  const parts = [
    ...ownConstraints(schema),
    ...variantsOf(schema).flatMap((variant) => ownConstraints(variant)),
    ...(items === null ? [] : ownConstraints(items).map((text) => `each: ${text}`)),
  ];
  return [...new Set(parts)].join('; ');
}

/** The object schemas a field may hold (itself, a union's variants, an array's items) whose fields are listed below it. */
function nestedObjects(schema: JsonSchema, name: string): { schema: JsonSchema; prefix: string }[] {
  if (schema.properties !== undefined) return [{ schema, prefix: `${name}.` }];
  if (schema.type === 'array') {
    const items = asSchema(schema.items);
    return items === null ? [] : nestedObjects(items, `${name}[]`);
  }
  return variantsOf(schema).flatMap((variant) => nestedObjects(variant, name));
}

/**
 * The fields of a union's object variants as one list (`client_auth`: none,
 * bearer or basic): a field is required only when every variant requires it,
 * its types are joined, and one that only some variants have says so.
 */
function mergeVariants(variants: FieldRow[][]): FieldRow[] {
  const merged = new Map<string, FieldRow & { count: number }>();
  for (const row of variants.flat()) {
    const seen = merged.get(row.name);
    merged.set(
      row.name,
      seen === undefined
        ? { ...row, count: 1 }
        : {
            ...seen,
            type: [...new Set([...seen.type.split(' | '), ...row.type.split(' | ')])].join(' | '),
            required: seen.required && row.required,
            count: seen.count + 1,
          },
    );
  }
  return [...merged.values()].map(({ count, ...row }) =>
    count === variants.length
      ? row
      : {
          ...row,
          required: false,
          constraints: ['in some forms only', row.constraints].filter((text) => text !== '').join('; '),
        },
  );
}

/** Every field of an object schema, nested ones as dotted names. */
export function fieldRows(schema: JsonSchema, prefix = '', depth = 0): FieldRow[] {
  const rows: FieldRow[] = [];
  const required = schema.required ?? [];
  for (const [key, value] of Object.entries(schema.properties ?? {})) {
    const field = asSchema(value);
    if (field === null) continue;
    const name = prefix + key;
    rows.push({ name, type: typeText(field), required: required.includes(key), constraints: constraintsText(field) });
    if (depth >= 3) continue;
    rows.push(
      ...mergeVariants(nestedObjects(field, name).map((nested) => fieldRows(nested.schema, nested.prefix, depth + 1))),
    );
  }
  return rows;
}
