/**
 * The PEC receipt parser must survive whatever lands in a PEC mailbox: it
 * never throws, never hangs, and always answers findings of the contract's
 * shape. fast-check drives random bytes, truncated receipts, broken
 * daticert.xml and deep nesting; the bounce suite's hostile MIME runs once
 * each. Every parse runs in a worker under a time budget, as the bounce
 * parser's hostile suite does (a synchronous regex stuck on one input would
 * otherwise hang the test run rather than fail it).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PEC_RECEIPT_TYPES, type PecReceiptFindings } from '../../src/core/pec/pec.js';
import { assertBuiltFromCurrentSources, BUILT_PEC_PARSER } from '../helpers/built-parser.js';
import { GENERATORS, hostileMessages } from '../helpers/hostile-mime.js';
import { createModuleWorker, type WorkerOutcome } from '../helpers/parser-worker.js';
import { checkProperty } from '../helpers/property-runs.js';
import { buildEnvelope, buildReceipt } from './receipt-fixtures.js';
import { daticertXml, type DaticertFields } from './receipt-parts.js';

/** Generous: a correct parser takes milliseconds on any of these. A timeout is the finding, not slowness. */
const BUDGET_MS = 10_000;
const SEED = 20240115;
const FIELDS = [
  'type',
  'recognisedBy',
  'referencedMessageId',
  'mailId',
  'identificativo',
  'recipient',
  'addressees',
  'error',
  'errorDetail',
  'issuer',
  'issuedAt',
  'receiptKind',
  'originalSubject',
];

const parser = createModuleWorker<PecReceiptFindings>({ module: BUILT_PEC_PARSER, exportName: 'analysePecReceipt' });

/** Resolved, with every field of the contract, a known type or none, and recognisedBy null exactly when the type is. */
function expectFindings(outcome: WorkerOutcome<PecReceiptFindings>, name: string): PecReceiptFindings {
  if (outcome.status !== 'resolved') throw new Error(`${name}: ${JSON.stringify(outcome).slice(0, 2000)}`);
  const findings = outcome.value;
  expect(Object.keys(findings).sort(), name).toEqual([...FIELDS].sort());
  expect([...PEC_RECEIPT_TYPES, null], name).toContain(findings.type);
  expect(findings.recognisedBy === null, name).toBe(findings.type === null);
  expect(Array.isArray(findings.addressees), name).toBe(true);
  return findings;
}

const analyse = async (raw: Buffer | Uint8Array, name: string): Promise<PecReceiptFindings> =>
  expectFindings(await parser.run(Buffer.from(raw), BUDGET_MS), name);

const receiptType = fc.constantFrom(...PEC_RECEIPT_TYPES);

const FIELDS_OF_A_DELIVERY: DaticertFields = {
  tipo: 'avvenuta-consegna',
  error: 'nessuno',
  sender: 'fatture@pec.acme.example',
  addressees: [{ address: 'mario.rossi@pec.cliente.example', certified: true }],
  originalSubject: 'Fattura',
  issuer: 'Gestore',
  issuedAt: { day: '15/01/2024', time: '10:30:00', zone: '+0100' },
  identificativo: 'id-1',
  msgid: '<m@acme.example>',
  receiptKind: 'completa',
  recipient: 'mario.rossi@pec.cliente.example',
  errorDetail: null,
};
const DATICERT = daticertXml(FIELDS_OF_A_DELIVERY);
/** What breaks XML: markup characters, entity starts, and names of the DTD's elements. */
const XML_PIECES = [
  '<',
  '>',
  '/',
  '&',
  ';',
  '"',
  "'",
  '=',
  '!',
  '?',
  '[',
  ']',
  '-',
  '&lt;',
  '&#',
  '&#x',
  '<![CDATA[',
  '<!--',
  '<dati>',
  '</dati>',
  '<postacert tipo="',
  'tipo=',
  ' ',
  '\n',
  '\u0000',
  '\uFFFD',
];

/** `edits` random insertions, deletions and replacements of XML pieces in a real daticert. */
const brokenDaticert = fc
  .array(fc.record({ at: fc.noBias(fc.nat()), cut: fc.nat({ max: 8 }), piece: fc.constantFrom(...XML_PIECES) }), {
    minLength: 1,
    maxLength: 12,
  })
  .map((edits) =>
    edits.reduce((xml, edit) => {
      const at = edit.at % (xml.length + 1);
      return xml.slice(0, at) + edit.piece + xml.slice(at + edit.cut);
    }, DATICERT),
  );

describe('the PEC receipt parser on hostile input', () => {
  beforeAll(() => assertBuiltFromCurrentSources());
  afterAll(() => parser.close());

  it('still reads an intact receipt in the worker (the harness itself works)', async () => {
    expect((await analyse(buildReceipt({ type: 'errore-consegna' }), 'intact')).type).toBe('errore-consegna');
  });

  it('answers on random bytes', async () => {
    await checkProperty(
      'pec random bytes',
      150,
      fc.uint8Array({ maxLength: 16_384 }),
      async (bytes) => {
        await analyse(bytes, 'random bytes');
      },
      { seedOffset: 1 },
    );
  }, 120_000);

  it('answers on receipts and envelopes cut anywhere, and keeps the type once the headers are whole', async () => {
    // noBias: fast-check's bias towards small values would cut nearly every message at byte 0.
    const cut = fc.record({
      type: receiptType,
      envelope: fc.boolean(),
      at: fc.noBias(fc.integer({ min: 0, max: 1_000_000 })),
    });
    await checkProperty(
      'pec truncated receipts',
      200,
      cut,
      async ({ type, envelope, at }) => {
        const whole = envelope ? buildEnvelope() : buildReceipt({ type });
        const raw = whole.subarray(0, Math.floor((whole.length * at) / 1_000_000));
        const findings = await analyse(raw, `${envelope ? 'envelope' : type} cut at ${raw.length}/${whole.length}`);
        const headersEnd = whole.indexOf('\r\n\r\n');
        if (envelope) expect(findings.type).toBeNull();
        else if (raw.length > headersEnd + 4) expect([findings.type, findings.recognisedBy]).toEqual([type, 'header']);
      },
      { seedOffset: 2 },
    );
  }, 120_000);

  it('answers on broken daticert.xml, and still knows the type by header', async () => {
    await checkProperty(
      'pec broken daticert',
      200,
      fc.tuple(receiptType, brokenDaticert),
      async ([type, daticert]) => {
        expect((await analyse(buildReceipt({ type, daticert }), 'broken daticert')).type).toBe(type);
      },
      { seedOffset: 3 },
    );
  }, 120_000);

  it('answers on XML-like noise as daticert with no X-Ricevuta', async () => {
    const noise = fc
      .array(fc.constantFrom(...XML_PIECES, 'postacert', 'tipo', 'a'), { maxLength: 3000 })
      .map((pieces) => pieces.join(''));
    await checkProperty(
      'pec xml noise',
      150,
      noise,
      async (daticert) => {
        await analyse(buildReceipt({ type: 'accettazione', daticert, omitReceiptHeader: true }), 'xml noise');
      },
      { seedOffset: 4 },
    );
  }, 120_000);

  it('answers on deep nesting: XML elements, multiparts and embedded messages', async () => {
    const nesting = fc.record({
      depth: fc.integer({ min: 1, max: 50_000 }),
      where: fc.constantFrom('xml', 'multipart', 'rfc822'),
    });
    await checkProperty(
      'pec deep nesting',
      45,
      nesting,
      async ({ depth, where }) => {
        await analyse(nested(where, depth), `${where} nested ${depth} deep`);
      },
      { seedOffset: 5 },
    );
  }, 180_000);

  it('answers on entity bombs and external entities in daticert, expanding none past its limits', async () => {
    // Quadratic blowup: one kilobyte entity referenced 300,000 times fits in 1 MiB and expands to 300 MB.
    const quadratic = DATICERT.replace(
      '<!DOCTYPE postacert SYSTEM "Postacert.dtd">',
      `<!DOCTYPE postacert [<!ENTITY a "${'ha'.repeat(500)}">]>`,
    ).replace('<oggetto>Fattura', `<oggetto>${'&a;'.repeat(300_000)}`);
    const laughs = `<!DOCTYPE postacert [<!ENTITY a "${'ha'.repeat(500)}">${Array.from({ length: 9 }, (_, i) => `<!ENTITY b${i} "${`&${i === 0 ? 'a' : `b${i - 1}`};`.repeat(10)}">`).join('')}]>`;
    const bomb = DATICERT.replace('<!DOCTYPE postacert SYSTEM "Postacert.dtd">', laughs).replace(
      '<oggetto>Fattura',
      '<oggetto>&b8;',
    );
    const external = DATICERT.replace(
      '<!DOCTYPE postacert SYSTEM "Postacert.dtd">',
      '<!DOCTYPE postacert [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
    ).replace('<oggetto>Fattura', '<oggetto>&x;');
    for (const [name, daticert] of [
      ['quadratic blowup', quadratic],
      ['billion laughs', bomb],
      ['external entity', external],
    ] as const) {
      const findings = await analyse(buildReceipt({ type: 'avvenuta-consegna', daticert }), name);
      expect(findings.type).toBe('avvenuta-consegna');
      expect(findings.originalSubject?.length ?? 0, name).toBeLessThan(70_000);
      expect(findings.originalSubject ?? '', name).not.toContain('root:');
    }
  });

  // Together under mailparser's 1 MB limit of one header block, past which the whole message is unreadable.
  it('answers on header values of a quarter megabyte', async () => {
    const extraHeaders = [
      `X-Riferimento-Message-ID: ${'<'.repeat(1 << 18)}`,
      `X-Genro-Mail-ID: ${' '.repeat(1 << 17)}x`,
      `X-TipoRicevuta: ${'completa '.repeat(20_000)}`,
    ];
    const findings = await analyse(
      buildReceipt({
        type: 'presa-in-carico',
        extraHeaders,
        omitReference: true,
        subject: `PRESA IN CARICO: ${'x'.repeat(1 << 18)}`,
      }),
      'huge headers',
    );
    expect([findings.type, findings.mailId]).toEqual(['presa-in-carico', 'x']);
  });

  // The bounce suite's hostile MIME (each kind once): a PEC mailbox gets broken mail too.
  for (const { name, raw } of hostileMessages(SEED, GENERATORS.length)) {
    it(`answers on ${name}, ${raw.length} bytes`, async () => {
      await analyse(raw, name);
    });
  }
});

/** A receipt whose daticert, MIME tree or chain of embedded originals is `depth` levels deep. */
function nested(where: 'xml' | 'multipart' | 'rfc822', depth: number): Buffer {
  if (where === 'xml') {
    const daticert = DATICERT.replace('<dati>', `<dati>${'<x>'.repeat(depth)}${'</x>'.repeat(depth)}`);
    return buildReceipt({ type: 'accettazione', daticert, omitReceiptHeader: true });
  }
  const head =
    'From: posta-certificata@pec.gestore.example\r\nSubject: CONSEGNA: x\r\nX-Riferimento-Message-ID: <m@acme.example>\r\nMIME-Version: 1.0\r\n';
  if (where === 'rfc822')
    return Buffer.from(
      `${head}${'Content-Type: message/rfc822\r\n\r\n'.repeat(depth)}X-Genro-Mail-ID: bottom\r\n\r\nend\r\n`,
    );
  let open = `${head}Content-Type: multipart/mixed; boundary="b0"\r\n\r\n`;
  for (let level = 1; level < depth; level += 1)
    open += `--b${level - 1}\r\nContent-Type: multipart/mixed; boundary="b${level}"\r\n\r\n`;
  return Buffer.from(
    `${open}--b${depth - 1}\r\nContent-Type: application/xml; name="daticert.xml"\r\n\r\n${DATICERT}\r\n`,
  );
}
