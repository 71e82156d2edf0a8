/**
 * Every route of the catalog (src/ingress/http/route-catalog.ts) under generated
 * hostile input, against the built daemon as a separate process: random and
 * percent-garbled path parameters, query strings with known and unknown keys,
 * bodies of any JSON shape, broken JSON and deep nesting, under the admin
 * token, a tenant key or none. Properties: never a 5xx; every 4xx is the error
 * envelope with a stable code; after each batch the process is the same and healthy.
 */
import { request } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/ingress/http/errors.js';
import { ROUTE_CATALOG } from '../../src/ingress/http/route-catalog.js';
import type { RouteDoc } from '../../src/ingress/http/route-doc.js';
import { deepJson, hostileText, sqlText } from '../helpers/hostile-json.js';
import { startHostileTarget, type HostileTarget } from '../helpers/hostile-target.js';
import { tearDownProcesses } from '../helpers/process-teardown.js';
import { checkProperty } from '../helpers/property-runs.js';

const started = tearDownProcesses({ stop: 'file' });
let target: HostileTarget;

beforeAll(async () => {
  target = await startHostileTarget(started, { toml: '[http]\nmax_body_bytes = 262144\nauth_max_failures = 100000\n' });
}, 60_000);
afterAll(() => target?.db.close());

/** The field names a schema knows, so that generated input reaches past "unknown field". */
function keysOf(schema: unknown): string[] {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape === undefined ? [] : Object.keys(shape);
}

/** Percent-encodes every byte but the unreserved ones (a lone surrogate goes as U+FFFD's bytes; %ED%A0%80 below sends one raw). */
const percent = (text: string): string =>
  [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).padStart(2, '0').toUpperCase()}`,
    )
    .join('');

/** A path segment: a plausible id, hostile text percent-encoded, or percent garbage a decoder may choke on. */
const segment = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('acme', 'main', 'other', 'rcpt@example.net', 'inv-1') },
  { weight: 3, arbitrary: fc.oneof(sqlText, hostileText).map((text) => percent(text.slice(0, 2000))) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '..',
      '%2e%2e',
      'a\\b',
      '%5C..%5C',
      '..%2f..%2fetc%2fpasswd',
      '%00',
      '%',
      '%zz',
      '%ED%A0%80',
      '%C0%AF',
      '%FF',
      '%25',
      '%0d%0aX-Injected:%20yes',
      'a%2Fb',
      '%20',
      'x'.repeat(9000),
    ),
  },
);

const queryValue = fc.oneof(
  sqlText,
  hostileText.map((text) => text.slice(0, 2000)),
  fc.constantFrom('true', 'false', '-1', '1e309', 'NaN', '0x10', '', '*'),
);
const rawQuery = fc.constantFrom(
  '%',
  '%zz=1',
  'a=%ED%A0%80',
  '=',
  '&&&',
  'tenant_id=acme&tenant_id=other',
  'limit=1&limit=2',
  '%00=%00',
  'ids=' + ',,'.repeat(5000),
);

interface Attack {
  route: RouteDoc;
  params: string[];
  query: string;
  body: { text: string; contentType: string } | null;
  as: 'admin' | 'tenant' | 'none';
}

function bodyFor(route: RouteDoc): fc.Arbitrary<Attack['body']> {
  const keys = [...keysOf(route.body), ...keysOf(route.query)];
  const value = fc.oneof(
    sqlText,
    hostileText.map((text) => text.slice(0, 5000)),
    fc.anything({ maxDepth: 2 }),
    fc.constantFrom(null, -1, 2 ** 53, 1e308, true, [], {}),
  );
  const known = keys.length === 0 ? fc.constant({}) : fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 4 });
  const json =
    (contentType = 'application/json') =>
    (v: unknown) => ({ text: JSON.stringify(v) ?? 'null', contentType });
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 4, arbitrary: known.map(json()) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(json()) },
    { weight: 1, arbitrary: known.map(json('application/vnd.evil+json; charset=utf-7')) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        { text: deepJson(10_000, 'array'), contentType: 'application/json' },
        { text: deepJson(10_000, 'object'), contentType: 'application/json' },
        { text: '{"id":', contentType: 'application/json' },
        { text: '\0\0\0', contentType: 'application/json' },
        { text: '{"id":"a"}', contentType: 'text/plain' },
        { text: `{"name":"${'x'.repeat(300_000)}"}`, contentType: 'application/json' },
        { text: '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}', contentType: 'application/json' },
      ),
    },
  );
}

function routeAttack(route: RouteDoc): fc.Arbitrary<Attack> {
  const paramCount = (route.path.match(/\{\w+\}/g) ?? []).length;
  const queryKeys = [
    ...keysOf(route.query),
    ...(route.bodyOrQuery ? keysOf(route.body) : []),
    'force',
    'tenant_id',
    'zz',
  ];
  const query = fc.oneof(
    { weight: 1, arbitrary: fc.constant('') },
    {
      weight: 3,
      arbitrary: fc
        .dictionary(fc.constantFrom(...queryKeys), queryValue, { maxKeys: 4 })
        .map((entries) => new URLSearchParams(entries).toString()),
    },
    { weight: 1, arbitrary: rawQuery },
  );
  return fc.record({
    route: fc.constant(route),
    params: fc.array(segment, { minLength: paramCount, maxLength: paramCount }),
    query,
    body: bodyFor(route),
    as: fc.constantFrom<Attack['as']>('admin', 'admin', 'admin', 'tenant', 'none'),
  });
}

/** node:http, so that the path goes out exactly as built (fetch would resolve `..` and re-encode). */
function send(attack: Attack, path: string): Promise<{ status: number; type: string; text: string }> {
  const token = attack.as === 'admin' ? target.adminToken : attack.as === 'tenant' ? target.key : null;
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  // Framed by Content-Length: node's client would send a GET's body unframed, which the server reads as a second, garbage request.
  if (attack.body !== null)
    Object.assign(headers, {
      'content-type': attack.body.contentType,
      'content-length': String(Buffer.byteLength(attack.body.text)),
    });
  return new Promise((resolve, reject) => {
    const req = request(`${target.url}${path}`, { method: attack.route.method.toUpperCase(), headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          type: response.headers['content-type'] ?? '',
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      response.on('error', reject);
    });
    req.on('error', reject);
    req.end(attack.body?.text);
  });
}

const statuses = new Map<string, number>();
const perRoute = new Map<string, number>();

async function attackRoute(attack: Attack): Promise<void> {
  let index = 0;
  const path =
    attack.route.path.replace(/\{\w+\}/g, () => attack.params[index++] ?? 'x') +
    (attack.query === '' ? '' : `?${attack.query}`);
  const name = `${attack.route.method.toUpperCase()} ${attack.route.path}`;
  perRoute.set(name, (perRoute.get(name) ?? 0) + 1);
  const response = await send(attack, path);
  let code: string | undefined;
  if (response.status >= 400) {
    let body: { error?: { code?: string } } = {};
    try {
      body = JSON.parse(response.text) as typeof body;
    } catch {
      expect.fail(
        `${name} ${path.slice(0, 300)} as ${attack.as}, body ${JSON.stringify(attack.body)?.slice(0, 200)}: ${response.status} ${response.type} ${JSON.stringify(response.text.slice(0, 300))}`,
      );
    }
    code = body.error?.code;
    expect(
      Object.keys(body.error ?? {}).sort(),
      `${name} ${path.slice(0, 300)}: ${response.text.slice(0, 300)}`,
    ).toEqual(['code', 'details', 'message']);
    expect(ERROR_CODES).toContain(code);
  }
  statuses.set(
    `${response.status}${code === undefined ? '' : ` ${code}`}`,
    (statuses.get(`${response.status}${code === undefined ? '' : ` ${code}`}`) ?? 0) + 1,
  );
  expect(response.status, `${name} ${path.slice(0, 300)} as ${attack.as}: ${response.text.slice(0, 500)}`).toBeLessThan(
    500,
  );
}

describe('every admin route with hostile input (real daemon process)', () => {
  it('never answers 5xx, answers every refusal with the error envelope, and stays up', async () => {
    const perRouteRuns = 20;
    for (const [n, route] of ROUTE_CATALOG.entries()) {
      await checkProperty(
        `${route.method.toUpperCase()} ${route.path}`,
        perRouteRuns,
        routeAttack(route),
        attackRoute,
        { seedOffset: n },
      );
      await target.expectAlive();
    }
    console.log(
      `[hostile] admin routes: ${ROUTE_CATALOG.length} routes, ${[...perRoute.values()].reduce((a, b) => a + b, 0)} requests; answers ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect(perRoute.size).toBe(ROUTE_CATALOG.length);
  }, 240_000);
});
