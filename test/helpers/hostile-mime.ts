/**
 * Hostile MIME for fuzzing the bounce parser: broken, truncated, oversized and
 * pathological messages as bytes. Deterministic (seeded, see seeded-rng.ts)
 * so a failure names a seed that reproduces it; no dependency beyond Node.
 */
import { sampleDsn } from './sample-dsn.js';
import { seededRng, type Rng } from './seeded-rng.js';

export interface HostileMessage {
  name: string;
  raw: Buffer;
}

const B = (text: string): Buffer => Buffer.from(text, 'utf8');
const BOUNCE_HEADERS =
  'From: Mail Delivery System <MAILER-DAEMON@mx.hostile.example>\nTo: bounces@acme-shop.example\nSubject: Undelivered Mail Returned to Sender\n';
const BOUNDARY = /boundary="([^"]*)"/;

const outerBoundary = (dsn: string): string => BOUNDARY.exec(dsn)?.[1] ?? '';

/** Cut inside one occurrence of a marker (a boundary line, a base64 body), so the parser sees it half written. */
function cutInside(text: string, marker: RegExp, rng: Rng): string {
  const hits = [...text.matchAll(new RegExp(marker.source, 'g'))];
  if (hits.length === 0) return text.slice(0, rng.int(0, text.length));
  const hit = rng.pick(hits);
  return text.slice(0, (hit.index ?? 0) + rng.int(1, Math.max(1, hit[0].length - 1)));
}

/** `depth` multiparts, each inside the previous. */
function nestedMultiparts(depth: number): string {
  let head = `${BOUNCE_HEADERS}MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b0"\n\n`;
  for (let level = 1; level < depth; level += 1)
    head += `--b${level - 1}\nContent-Type: multipart/mixed; boundary="b${level}"\n\n`;
  let tail = `--b${depth - 1}\nContent-Type: message/delivery-status\n\nFinal-Recipient: rfc822; deep@example.org\nAction: failed\nStatus: 5.1.1\n\n`;
  for (let level = depth - 1; level >= 0; level -= 1) tail += `--b${level}--\n`;
  return head + tail;
}

/** An original that returns an original that returns one...: each level its own message/rfc822. */
function rfc822Chain(depth: number): string {
  const level = 'Content-Type: message/rfc822\nMessage-ID: <loop@hostile.example>\n\n';
  return `${BOUNCE_HEADERS}MIME-Version: 1.0\n${level.repeat(depth)}X-Genro-Mail-ID: bottom\n\nend\n`;
}

/** A bounce-looking message whose body is one line of `bytes` characters (base64's alphabet and dots) and no newline. */
function longLineBody(bytes: number, rng: Rng): string {
  const alphabet = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/.'];
  const unit = Array.from({ length: 4096 }, () => rng.pick(alphabet)).join('');
  return `${BOUNCE_HEADERS}Content-Type: text/plain\n\n${unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes)}`;
}

/** `count` recipient groups in one delivery-status part. */
function recipientBomb(count: number): string {
  const group = (i: number): string =>
    `Final-Recipient: rfc822; user${i}@example.org\nAction: failed\nStatus: 5.1.1\nDiagnostic-Code: smtp; 550 5.1.1 no such user\n`;
  const groups = Array.from({ length: count }, (_, i) => group(i)).join('\n');
  return `${BOUNCE_HEADERS}MIME-Version: 1.0\nContent-Type: multipart/report; report-type=delivery-status; boundary="R"\n\n--R\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mx.hostile.example\n\n${groups}\n--R--\n`;
}

/** The returned original reuses the report's boundary, and the report names two boundaries. */
function duplicatedBoundary(rng: Rng): string {
  const dsn = sampleDsn(rng);
  const outer = outerBoundary(dsn);
  return dsn.replaceAll(`${outer}-orig`, outer).replace(BOUNDARY, `boundary="${outer}"; boundary="other"`);
}

/** boundary="" and delimiter lines that are a bare `--`. */
function emptyBoundary(rng: Rng): string {
  const dsn = sampleDsn(rng);
  return dsn.replaceAll(outerBoundary(dsn), '');
}

function invalidCharsets(rng: Rng): string {
  const charsets = ['x-no-such-charset', 'utf-7', 'utf-16le', '""', 'iso-8859-99', '=?'];
  return sampleDsn(rng)
    .replaceAll('charset=utf-8', () => `charset=${rng.pick(charsets)}`)
    .replace('Subject: ', 'Subject: =?x-unknown?B?!!!not base64!!!?= =?utf-8?Q?=ZZ=?= =?utf-8?B?4oKs?= ');
}

function invalidEncodings(rng: Rng): string {
  const encodings = ['base64', 'base65', 'x-uuencode', 'quoted-printable', '8bit'];
  return sampleDsn(rng)
    .replaceAll('Content-Transfer-Encoding: base64', () => `Content-Transfer-Encoding: ${rng.pick(encodings)}`)
    .replaceAll('quoted-printable\n\n', 'quoted-printable\n\n=ZZ=\n=0=\n=')
    .replace(/(base64\n\n)([A-Za-z0-9+/]{10})/, '$1!!@@##$$%%^^&&**\n=Z=\n$2');
}

function headerBomb(count: number, rng: Rng): string {
  const names = ['Received', 'X-Header', 'Comments', 'Subject'];
  return `${Array.from({ length: count }, (_, i) => `${rng.pick(names)}: ${i} from host${i}.hostile.example`).join('\n')}\n${sampleDsn(rng)}`;
}

/** A few random edits: flip a bit, drop or repeat a slice, or drop in a token MIME parsers trip on. */
function mutate(raw: Buffer, rng: Rng): Buffer {
  const tokens = [
    '--',
    '\r',
    '\0',
    '=?',
    '?=',
    '\n\n',
    'Content-Type: multipart/mixed; boundary=',
    'Content-Transfer-Encoding: base64\n',
    '"',
    ';',
    '\u00ff',
  ];
  let out = raw;
  for (let edits = rng.int(1, 8); edits > 0; edits -= 1) {
    const at = rng.int(0, out.length);
    const op = rng.int(0, 3);
    if (op === 0 && out.length > 0) {
      const index = Math.min(at, out.length - 1);
      out[index] = (out[index] as number) ^ (1 << rng.int(0, 7));
    } else if (op === 1)
      out = Buffer.concat([out.subarray(0, at), out.subarray(Math.min(out.length, at + rng.int(1, 200)))]);
    else if (op === 2)
      out = Buffer.concat([out.subarray(0, at), out.subarray(at, at + rng.int(1, 200)), out.subarray(at)]);
    else out = Buffer.concat([out.subarray(0, at), Buffer.from(rng.pick(tokens), 'latin1'), out.subarray(at)]);
  }
  return out;
}

/** NULs at random places, and one where parsers look first: inside a header name and a header value. */
function withNuls(raw: Buffer, rng: Rng): Buffer {
  const out = Buffer.from(raw);
  for (let n = rng.int(1, 50); n > 0; n -= 1) out[rng.int(0, out.length - 1)] = 0;
  return Buffer.concat([Buffer.from('X-Nul\0Header: a\0b\n', 'latin1'), out]);
}

type Generator = (rng: Rng) => Buffer;

/** Every kind of hostile input, by name; hostileMessages cycles through them so each appears. */
export const GENERATORS: ReadonlyArray<readonly [string, Generator]> = [
  ['random-bytes', (rng) => rng.bytes(rng.int(0, 65_536))],
  ['empty', () => Buffer.alloc(0)],
  ['mutated-dsn', (rng) => mutate(B(sampleDsn(rng)), rng)],
  [
    'truncated-dsn',
    (rng) => {
      const dsn = sampleDsn(rng);
      return B(dsn.slice(0, rng.int(0, dsn.length)));
    },
  ],
  ['truncated-mid-boundary', (rng) => B(cutInside(sampleDsn(rng), /\n--=_hostile_[0-9a-f]+(-orig)?(--)?/, rng))],
  ['truncated-mid-base64', (rng) => B(cutInside(sampleDsn(rng), /base64\n\n[A-Za-z0-9+/=\n]{40,}/, rng))],
  ['deep-multipart-500', () => B(nestedMultiparts(500))],
  ['rfc822-chain-2000', () => B(rfc822Chain(2000))],
  ['long-line-body-1mb', (rng) => B(longLineBody(1 << 20, rng))],
  [
    'long-line-header-1mb',
    () => B(`From: MAILER-DAEMON@mx.hostile.example\nSubject: Undelivered ${'x'.repeat(1 << 20)}`),
  ],
  ['boundary-missing', (rng) => B(sampleDsn(rng).replace(/;\s*boundary="[^"]*"/, ''))],
  ['boundary-empty', (rng) => B(emptyBoundary(rng))],
  ['boundary-duplicated', (rng) => B(duplicatedBoundary(rng))],
  ['boundary-never-closed', (rng) => B(sampleDsn(rng).replaceAll(/\n--(=_hostile_[0-9a-f]+(-orig)?)--/g, '\n'))],
  ['invalid-charsets', (rng) => B(invalidCharsets(rng))],
  ['invalid-encodings', (rng) => B(invalidEncodings(rng))],
  ['header-bomb-10000', (rng) => B(headerBomb(10_000, rng))],
  [
    'encoded-word-bomb',
    (rng) => B(sampleDsn(rng).replace('Subject: ', `Subject: ${'=?utf-8?B?w6TDtsO8?= '.repeat(20_000)}`)),
  ],
  ['nul-bytes', (rng) => withNuls(B(sampleDsn(rng)), rng)],
  ['bare-cr', (rng) => B(sampleDsn(rng).replaceAll('\n', '\r'))],
  ['mixed-line-ends', (rng) => B(sampleDsn(rng).replaceAll('\n', () => rng.pick(['\n', '\r\n', '\r', '\n\r'])))],
  ['dsn-recipient-bomb-10000', () => B(recipientBomb(10_000))],
];

/** One hostile message of a kind (a GENERATORS name), rebuilt exactly from its seed. */
export function hostileMessage(kind: string, seed: number): HostileMessage {
  const generate = GENERATORS.find(([name]) => name === kind)?.[1];
  if (generate === undefined) throw new Error(`no hostile generator named ${kind}`);
  return { name: `${kind} (seed ${seed})`, raw: generate(seededRng(seed)) };
}

/**
 * `count` hostile messages for `seed`, cycling through GENERATORS (or only the
 * named `kinds`): count >= GENERATORS.length covers every kind once. Each
 * message gets its own seed, named in its name, for hostileMessage to rebuild.
 */
export function hostileMessages(
  seed: number,
  count: number,
  kinds: readonly string[] = GENERATORS.map(([name]) => name),
): HostileMessage[] {
  const rng = seededRng(seed);
  return Array.from({ length: count }, (_, i) =>
    hostileMessage(kinds[i % kinds.length] as string, Math.floor(rng.next() * 2 ** 32)),
  );
}

/**
 * A bounce of `bytes` bytes: a DSN whose returned original carries one big
 * base64 attachment (76-column lines), the way a bounced mail with a large
 * file comes back. The attachment repeats one random block: cheap to build.
 */
export function hugeMessage(bytes: number, seed = 1): Buffer {
  const block = seededRng(seed)
    .bytes(57 * 1024)
    .toString('base64')
    .replace(/.{76}/g, '$&\n');
  const head = B(`${BOUNCE_HEADERS}MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="H"

--H
Content-Type: message/delivery-status

Final-Recipient: rfc822; big@example.org
Action: failed
Status: 5.3.4
Diagnostic-Code: smtp; 552 5.3.4 Message size exceeds fixed maximum message size

--H
Content-Type: message/rfc822

From: orders@acme-shop.example
Message-ID: <huge@acme-shop.example>
X-Genro-Mail-ID: huge-1
Content-Type: multipart/mixed; boundary="A"

--A
Content-Type: application/octet-stream
Content-Transfer-Encoding: base64

`);
  const tail = B('\n--A--\n\n--H--\n');
  const room = Math.max(0, bytes - head.length - tail.length);
  const body = Buffer.from(block.repeat(Math.ceil(room / block.length)).slice(0, room), 'latin1');
  return Buffer.concat([head, body, tail]);
}
