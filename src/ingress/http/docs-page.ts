/**
 * GET /docs: the OpenAPI document as one self-contained HTML page (no script,
 * no CDN, readable offline): a table of contents by tag, then each route with
 * who may call it, its parameters, its body's fields and its responses.
 */
import { escapeHtml } from '../../core/index.js';
import type { OpenApiDocument, OpenApiOperation, OpenApiParameter } from './openapi-document.js';
import { constraintsText, fieldRows, typeText, type FieldRow } from './schema-text.js';

/** Escaped text with `backticked` spans as code, the one markup the descriptions use. */
const prose = (text: string): string => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
const slug = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 1.5rem;color:#1b1b1b;background:#fff}
code{font:0.9em ui-monospace,monospace;background:#f1f3f5;padding:0 .2em;border-radius:3px}
h2{border-bottom:2px solid #d0d7de;margin-top:2.5rem}
article{border:1px solid #d0d7de;border-radius:6px;padding:0 1rem 1rem;margin:1.25rem 0}
h3 code{background:none;font-size:1.05em}
.method{display:inline-block;min-width:4.5em;font:700 .85em ui-monospace,monospace;color:#fff;background:#0b5394;border-radius:3px;padding:.1em .4em;text-align:center}
.method-post{background:#1e6b34}.method-put{background:#7a4b00}.method-delete{background:#a4262c}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{border:1px solid #d0d7de;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}
caption{text-align:left;font-weight:600;padding:.25rem 0}
td.constraints{word-break:break-word}
nav ul{padding-left:1.25rem}
a{color:#0b5394}
@media (prefers-color-scheme:dark){body{background:#111;color:#e6e6e6}code,th{background:#222}th,td,article{border-color:#444}h2{border-color:#444}a{color:#8ab4f8}}
`;

const fieldTable = (caption: string, rows: FieldRow[], withIn: Map<string, string> | null = null): string => `
<table>
<caption>${escapeHtml(caption)}</caption>
<thead><tr><th scope="col">Name</th>${withIn === null ? '' : '<th scope="col">In</th>'}<th scope="col">Type</th><th scope="col">Required</th><th scope="col">Constraints</th></tr></thead>
<tbody>
${rows
  .map(
    (row) =>
      `<tr><th scope="row"><code>${escapeHtml(row.name)}</code></th>${withIn === null ? '' : `<td>${escapeHtml(withIn.get(row.name) ?? '')}</td>`}<td><code>${escapeHtml(row.type)}</code></td><td>${row.required ? 'yes' : 'no'}</td><td class="constraints">${prose(row.constraints)}</td></tr>`,
  )
  .join('\n')}
</tbody>
</table>`;

const parameterRows = (parameters: OpenApiParameter[]): FieldRow[] =>
  parameters.map((parameter) => ({
    name: parameter.name,
    type: typeText(parameter.schema),
    required: parameter.required,
    constraints: constraintsText(parameter.schema),
  }));

const anchor = (method: string, path: string): string => `op-${method}-${slug(path)}`;

type Described = Pick<OpenApiOperation, 'summary' | 'description' | 'parameters' | 'requestBody' | 'responses'>;

function operationSection(method: string, path: string, operation: Described): string {
  const id = anchor(method, path);
  const body = operation.requestBody?.content['application/json']?.schema;
  const parts = [
    `<h3 id="${id}"><span class="method method-${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>`,
    `<p><strong>${prose(operation.summary)}</strong></p>`,
    // The description ends with who may call the route (openapi-document.ts).
    ...operation.description.split('\n\n').map((text) => `<p>${prose(text)}</p>`),
  ];
  if (operation.parameters.length > 0) {
    parts.push(
      fieldTable(
        'Parameters',
        parameterRows(operation.parameters),
        new Map(operation.parameters.map((parameter) => [parameter.name, parameter.in])),
      ),
    );
  }
  if (body !== undefined) {
    const rows = fieldRows(body);
    parts.push(
      rows.length > 0
        ? fieldTable(`Body fields (JSON${operation.requestBody?.required === true ? '' : ', may be omitted'})`, rows)
        : '<p>Body: none needed.</p>',
    );
  }
  const responses = Object.entries(operation.responses).map(
    ([status, response]) => `<dt>${escapeHtml(status)}</dt><dd>${prose(response.description)}</dd>`,
  );
  parts.push(`<h4>Responses</h4>\n<dl>${responses.join('')}</dl>`);
  // The fields of each documented answer (error answers share the envelope, listed once under Errors).
  for (const [status, response] of Object.entries(operation.responses)) {
    const schema = response.content?.['application/json']?.schema;
    const rows = schema === undefined || schema.$ref !== undefined ? [] : fieldRows(schema);
    if (rows.length > 0) parts.push(fieldTable(`Response ${status} fields`, rows));
  }
  return `<article aria-labelledby="${id}">\n${parts.join('\n')}\n</article>`;
}

function operationsByTag(document: OpenApiDocument): Map<string, [string, string, OpenApiOperation][]> {
  const byTag = new Map<string, [string, string, OpenApiOperation][]>(document.tags.map((tag) => [tag.name, []]));
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const tag of operation.tags) byTag.get(tag)?.push([method, path, operation]);
    }
  }
  return byTag;
}

export function renderDocsPage(document: OpenApiDocument): string {
  const byTag = operationsByTag(document);
  const contents = [...byTag]
    .map(
      ([tag, operations]) =>
        `<li><a href="#tag-${slug(tag)}">${escapeHtml(tag)}</a><ul>${operations
          .map(
            ([method, path, operation]) =>
              `<li><a href="#${anchor(method, path)}"><code>${method.toUpperCase()} ${escapeHtml(path)}</code></a>: ${prose(operation.summary)}</li>`,
          )
          .join('')}</ul></li>`,
    )
    .join('\n');
  const sections = [...byTag]
    .map(
      ([tag, operations]) =>
        `<section aria-labelledby="tag-${slug(tag)}">\n<h2 id="tag-${slug(tag)}">${escapeHtml(tag)}</h2>\n${operations.map(([method, path, operation]) => operationSection(method, path, operation)).join('\n')}\n</section>`,
    )
    .join('\n');
  const envelope = document.components.schemas.Error;
  // Requests mailproxy makes to client applications: what a client must implement.
  const webhooks = Object.entries(document.webhooks).map(([name, webhook]) =>
    operationSection('post', name, webhook.post),
  );
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(document.info.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${escapeHtml(document.info.title)}</h1>
<p>API version ${escapeHtml(document.info.version)}. The same description as OpenAPI ${escapeHtml(document.openapi)}: <a href="/openapi.json"><code>/openapi.json</code></a>.</p>
<p>${prose(document.info.description)}</p>
</header>
<nav aria-labelledby="contents">
<h2 id="contents">Contents</h2>
<ul>
<li><a href="#errors">Errors</a></li>
${contents}
${webhooks.length === 0 ? '' : '<li><a href="#webhooks">Webhooks: requests mailproxy makes to your application</a></li>'}
</ul>
</nav>
<main>
<section aria-labelledby="errors">
<h2 id="errors">Errors</h2>
<p>Every error answers this body; the status of each code is listed with each route's responses.</p>
${envelope === undefined ? '' : fieldTable('Error body fields', fieldRows(envelope))}
</section>
${sections}
${webhooks.length === 0 ? '' : `<section aria-labelledby="webhooks">\n<h2 id="webhooks">Webhooks: requests mailproxy makes to your application</h2>\n${webhooks.join('\n')}\n</section>`}
</main>
</body>
</html>
`;
}
