/**
 * fast-check arbitraries of hostile request content: strings that carry SQL
 * metacharacters, CR/LF/NUL header injections, lone surrogates and huge runs;
 * /add-messages items with every field open to them; whole bodies of random
 * shape, broken JSON, invalid UTF-8 and deep nesting. Pure data, no I/O.
 */
import fc from 'fast-check';

/** Round-trip candidates: legal in any text field, hostile to string-built SQL. */
export const SQL_METAS = [
  "'",
  '"',
  '`',
  '\\',
  ';',
  '%',
  '_',
  '--',
  '/*',
  '*/',
  "''",
  "\\'",
  "' OR '1'='1",
  "'; DROP TABLE messages; --",
  '"; DELETE FROM tenants WHERE "1"="1',
  "x') UNION SELECT api_key_hash FROM tenants --",
  "%' OR 1=1 --",
  'NULL',
  "char(39)||'",
  '$1',
  '?',
  ':id',
  '@tenant_id',
  "O'Brien",
] as const;

/** Header injection attempts: each must be refused or travel inside one header, never start another. */
export const INJECTIONS = [
  '\r\nBcc: victim@evil.example',
  '\nX-Injected: lf',
  '\rX-Injected: cr',
  '\r\n\r\n<b>smuggled body</b>',
  '\r\n X-Folded: continuation',
  '\0X-Injected: nul',
  '\u0085X-Injected: nel',
  '\u2028X-Injected: ls',
  '=?utf-8?q?=0D=0AX-Injected:_ew?=',
  '%0d%0aX-Injected: pct',
] as const;

const LONE_SURROGATES = ['\ud800', '\udfff', 'a\ud83dz', '\ude00\ud83d'] as const;

/** Text that should be stored and come back exactly as sent: SQL metacharacters within printable text. */
export const sqlText: fc.Arbitrary<string> = fc
  .tuple(fc.string({ maxLength: 12 }), fc.constantFrom(...SQL_METAS), fc.string({ maxLength: 12 }))
  .map(([before, meta, after]) => `${before}${meta}${after}`.replace(/[\r\n\0]/g, ' '));

/** Anything a string field might be sent. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: sqlText },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 10 }), fc.constantFrom(...INJECTIONS), fc.string({ maxLength: 10 }))
      .map((parts) => parts.join('')),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 5 }), fc.constantFrom(...LONE_SURROGATES))
      .map((parts) => parts.join('')),
  },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\t', '\0', '\u00a0', 'é', '✓', '😀') },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('x', 'é', "'", '\r\n'), fc.integer({ min: 1000, max: 120_000 }))
      .map(([unit, n]) => unit.repeat(n)),
  },
);

const address = fc.constantFrom(
  'sender@example.com',
  'rcpt@example.net',
  "o'brien@example.org",
  '"quoted; --"@example.net',
  'üser@exämple.de',
);
/** A mailbox: bare, or with a display name that may hold quotes, commas, SQL or line breaks. */
export const hostileMailbox: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: address },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.oneof(
          sqlText,
          hostileText,
          fc.constantFrom('Evil, victim@evil.example', '"A, B"', 'Name; x@y.z', 'a"b', '=?utf-8?B?w6k=?='),
        ),
        address,
      )
      .map(([name, addr]) => `${name} <${addr}>`),
  },
  { weight: 1, arbitrary: hostileText },
);

const hostileName = fc.oneof(
  fc.constantFrom(
    'X-Custom',
    'X-Sql',
    'X-Report',
    'Bcc',
    'Subject',
    'Content-Type',
    'X-Genro-Mail-ID',
    'Received',
    'X-Mail-Proxy-Account',
  ),
  fc.string({ minLength: 1, maxLength: 20 }),
);

/** A field value of the wrong kind: numbers, objects, arrays, null, booleans. */
const wrongType = fc.oneof(fc.anything({ maxDepth: 3 }), fc.constantFrom(null, true, 0, -1, 1e308, [], {}));

/** Mostly a value the daemon should take (so that accepted messages get checked too), sometimes a hostile one. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, hostile: fc.Arbitrary<U>): fc.Arbitrary<T | U> =>
  fc.oneof({ weight: 8, arbitrary: valid }, { weight: 1, arbitrary: hostile });

const ITEM_FIELDS = [
  'id',
  'tenant_id',
  'account_id',
  'from',
  'to',
  'cc',
  'bcc',
  'reply_to',
  'return_path',
  'subject',
  'body',
  'html',
  'content_type',
  'headers',
  'attachments',
  'priority',
  'deferred_ts',
  'batch_code',
  'message_id',
] as const;

export interface ItemSpec {
  /** Appended to the test's unique id prefix; `null` sends a wrong-typed id. */
  idSuffix: string | null;
  fields: Record<string, unknown>;
  /** A field (known or not) set to a value of another type. */
  wrong: { field: string; value: unknown } | null;
}

const attachment = fc.record(
  {
    filename: mostly(
      fc.oneof(
        fc.constantFrom('report.pdf', 'CON', '.htaccess', '..', 'ünïcode.txt'),
        sqlText.map((t) => t.replace(/[/\\]/g, '')),
      ),
      fc.oneof(fc.constantFrom('../../etc/passwd', '..\\\\..\\\\boot.ini', 'a/b.txt'), hostileText),
    ),
    storage_path: fc.oneof(
      fc.constantFrom('aGVsbG8=', 'data:text/plain;base64,aGk='),
      fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('base64')),
    ),
    fetch_mode: fc.constant('base64'),
    mime_type: fc.option(fc.oneof(fc.constantFrom('application/pdf', 'text/plain'), hostileText), { nil: undefined }),
  },
  { requiredKeys: ['filename', 'storage_path', 'fetch_mode'] },
);

const validMailbox = fc.oneof(
  address,
  fc
    .tuple(
      sqlText.map((t) => t.replace(/[<>"\\]/g, '')),
      address,
    )
    .map(([name, addr]) => `"${name}" <${addr}>`),
);

export const itemSpec: fc.Arbitrary<ItemSpec> = fc.record({
  idSuffix: fc.oneof(
    { weight: 6, arbitrary: fc.constant('') },
    { weight: 3, arbitrary: sqlText.map((t) => t.replace(/\s/g, '')) },
    { weight: 1, arbitrary: hostileText },
    { weight: 1, arbitrary: fc.constant(null) },
  ),
  fields: fc.record(
    {
      from: mostly(validMailbox, hostileMailbox),
      to: mostly(
        fc.oneof(validMailbox, fc.array(validMailbox, { minLength: 1, maxLength: 3 })),
        fc.oneof(hostileMailbox, fc.array(hostileMailbox, { maxLength: 3 })),
      ),
      cc: mostly(fc.array(validMailbox, { maxLength: 2 }), fc.array(hostileMailbox, { maxLength: 2 })),
      reply_to: mostly(validMailbox, hostileMailbox),
      return_path: mostly(address, hostileText),
      subject: mostly(sqlText, hostileText),
      body: mostly(sqlText, hostileText),
      html: mostly(sqlText, hostileText),
      headers: fc.dictionary(hostileName, mostly(sqlText, hostileText), { maxKeys: 3 }),
      attachments: fc.array(attachment, { maxLength: 2 }),
      batch_code: mostly(sqlText, hostileText),
      message_id: mostly(
        fc.constantFrom('<a.b@example.com>', "<o'brien;--@example.com>", "x'or'1'='1@example.com"),
        hostileText,
      ),
      priority: mostly(fc.constantFrom(0, 3, 'high', 'low'), wrongType),
      deferred_ts: mostly(fc.constantFrom(0, 1, 1_000_000_000), wrongType),
    },
    { requiredKeys: [] },
  ),
  wrong: fc.oneof(
    { weight: 5, arbitrary: fc.constant(null) },
    {
      weight: 1,
      arbitrary: fc.record({
        field: fc.oneof(fc.constantFrom(...ITEM_FIELDS), fc.string({ maxLength: 8 })),
        value: wrongType,
      }),
    },
  ),
});

/** A JSON text nested `depth` levels deep inside `wrap` (object or array at each level). */
export function deepJson(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array'
    ? `${'['.repeat(depth)}1${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

export type RawBody = { kind: 'json'; value: unknown } | { kind: 'bytes'; bytes: Buffer; contentType?: string };

/** Whole /add-messages bodies that are wrong as a whole: any JSON, broken JSON, bad bytes, deep nesting, wrong media type. */
export function wholeBody(maxBodyBytes: number): fc.Arbitrary<RawBody> {
  const bytes = (text: string | Buffer, contentType?: string): RawBody => ({
    kind: 'bytes',
    bytes: Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8'),
    ...(contentType === undefined ? {} : { contentType }),
  });
  return fc.oneof(
    fc.jsonValue({ maxDepth: 4 }).map((value): RawBody => ({ kind: 'json', value })),
    fc
      .record({
        messages: fc.oneof(fc.anything({ maxDepth: 3 }), fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 4 })),
      })
      .map((value): RawBody => ({ kind: 'json', value })),
    fc.constantFrom<RawBody>(
      bytes(deepJson(10_000, 'array')),
      bytes(deepJson(10_000, 'object')),
      bytes(`{"messages":${deepJson(10_000, 'array')}}`),
      bytes(
        `{"messages":[{"id":"deep","from":"a@example.com","to":"b@example.net","headers":${deepJson(10_000, 'object')}}]}`,
      ),
      bytes(`{"messages":[${deepJson(100_000, 'array')}]}`),
      bytes(
        Buffer.concat([
          Buffer.from('{"messages":[{"id":"bad-utf8","from":"a@example.com","to":"b@example.net","subject":"'),
          Buffer.from([0xed, 0xa0, 0x80, 0xff, 0xc0, 0xaf]),
          Buffer.from('"}]}'),
        ]),
      ),
      bytes(Buffer.from('{"messages":[]}\0\0\0')),
      bytes('\0'.repeat(64)),
      bytes('{"messages":[{"id":"trunc","from":"a@exa'),
      bytes(`{"messages":[], "pad": "${'x'.repeat(maxBodyBytes)}"}`),
      bytes('{"messages":[]}', 'text/plain'),
      bytes('messages=1', 'application/x-www-form-urlencoded'),
      bytes('{"messages":[],"messages":[{"id":"dup-key"}]}'),
      bytes('{"__proto__":{"ok":false},"messages":[]}'),
    ),
  );
}
