/**
 * Walks an OpenAPI document for what a reader needs on every field: a
 * description and an example, on each request and response field (nested ones
 * too), each parameter and header, and an example on each error response.
 */
type Schema = Record<string, any>;

const hasText = (value: unknown): boolean => typeof value === 'string' && value.trim() !== '';
const hasExample = (node: Schema): boolean =>
  (Array.isArray(node.examples) && node.examples.length > 0) || node.example !== undefined;

/** `#/components/schemas/Error` -> the schema it names. */
function resolver(document: Schema): (ref: string) => Schema {
  return (ref) =>
    ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: Schema, key) => node?.[key], document);
}

/** Fields under `schema` without a description or an example, as `where.field` paths. */
export function undescribedFields(
  schema: Schema | undefined,
  where: string,
  resolve: (ref: string) => Schema,
  seen = new Set<Schema>(),
): string[] {
  if (schema === undefined || typeof schema !== 'object' || seen.has(schema)) return [];
  seen.add(schema);
  if (typeof schema.$ref === 'string') return undescribedFields(resolve(schema.$ref), where, resolve, seen);
  const problems: string[] = [];
  for (const [name, field] of Object.entries<Schema>(schema.properties ?? {})) {
    const target = typeof field.$ref === 'string' ? { ...resolve(field.$ref), ...field } : field;
    if (!hasText(target.description)) problems.push(`${where}.${name}: no description`);
    if (!hasExample(target)) problems.push(`${where}.${name}: no example`);
    problems.push(...undescribedFields(field, `${where}.${name}`, resolve, seen));
  }
  const nested: [Schema | undefined, string][] = [
    [schema.items, `${where}[]`],
    ...[...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])].map(
      (variant: Schema): [Schema, string] => [variant, where],
    ),
    [typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined, `${where}{}`],
  ];
  for (const [child, path] of nested) problems.push(...undescribedFields(child, path, resolve, seen));
  return problems;
}

interface Operation {
  parameters?: Schema[];
  requestBody?: { content: Record<string, Schema> };
  responses: Record<string, { description: string; content?: Record<string, Schema> }>;
}

/** An error response without an example of each code it names, or with one that is not the envelope of its code. */
function errorExampleProblems(
  status: string,
  response: Operation['responses'][string],
  where: string,
  resolve: (ref: string) => Schema,
): string[] {
  const media = response.content?.['application/json'];
  if (media === undefined) return [`${where} ${status}: no JSON body`];
  const envelope = media.schema?.$ref === '#/components/schemas/Error';
  if (!envelope)
    return hasExample(media) ||
      hasExample(typeof media.schema?.$ref === 'string' ? resolve(media.schema.$ref) : (media.schema ?? {}))
      ? []
      : [`${where} ${status}: no example`];
  const named = [...response.description.matchAll(/`([A-Z_]+)`/g)].map((match) => match[1] ?? '');
  const examples: Record<string, { value?: { error?: { code?: string; message?: string } } }> = media.examples ?? {};
  const problems = named
    .filter((code) => examples[code] === undefined)
    .map((code) => `${where} ${status}: no example of ${code}`);
  for (const [code, example] of Object.entries(examples)) {
    if (example.value?.error?.code !== code || !hasText(example.value.error.message))
      problems.push(`${where} ${status}: the example of ${code} is not its envelope`);
  }
  return problems;
}

function operationProblems(operation: Operation, where: string, resolve: (ref: string) => Schema): string[] {
  const problems: string[] = [];
  for (const parameter of operation.parameters ?? []) {
    const label = `${where} ${parameter.in} ${parameter.name}`;
    if (!hasText(parameter.description) && !hasText(parameter.schema?.description))
      problems.push(`${label}: no description`);
    if (!hasExample(parameter) && !hasExample(parameter.schema ?? {})) problems.push(`${label}: no example`);
    problems.push(...undescribedFields(parameter.schema, label, resolve));
  }
  for (const [type, media] of Object.entries(operation.requestBody?.content ?? {}))
    problems.push(...undescribedFields(media.schema, `${where} body(${type})`, resolve));
  for (const [status, response] of Object.entries(operation.responses)) {
    for (const [type, media] of Object.entries(response.content ?? {}))
      problems.push(...undescribedFields(media.schema, `${where} ${status}(${type})`, resolve));
    if (/^[45]/.test(status)) problems.push(...errorExampleProblems(status, response, where, resolve));
  }
  return problems;
}

/** Every problem of the document: its paths, its webhooks and its component schemas. */
export function documentationProblems(document: Schema): string[] {
  const resolve = resolver(document);
  const operations = (group: Record<string, Record<string, Operation>> | undefined, prefix: string): string[] =>
    Object.entries(group ?? {}).flatMap(([path, byMethod]) =>
      Object.entries(byMethod).flatMap(([method, operation]) =>
        operationProblems(operation, `${prefix}${method.toUpperCase()} ${path}`, resolve),
      ),
    );
  const components = Object.entries<Schema>(document.components?.schemas ?? {}).flatMap(([name, schema]) =>
    undescribedFields(schema, `#/components/schemas/${name}`, resolve),
  );
  return [...operations(document.paths, ''), ...operations(document.webhooks, 'webhook '), ...components];
}
