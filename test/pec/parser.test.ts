/**
 * The PEC receipt parser on receipts this project builds from the published
 * format (receipt-fixtures.ts): every type by each of the three ways it can be
 * known, and the facts daticert.xml and the headers give.
 */
import { describe, expect, it } from 'vitest';
import { analysePecReceipt } from '../../src/pec/pec-receipt-parser.js';
import { NOT_A_RECEIPT, PEC_RECEIPT_TYPES, type PecReceiptType } from '../../src/core/pec/pec.js';
import { buildEnvelope, buildOriginal, buildReceipt } from './receipt-fixtures.js';
import { daticertXml, type DaticertFields } from './receipt-parts.js';

const REFERENCE = '<fattura-2024-001@acme.example>';
/** 15/01/2024 10:30:00 at +0100. */
const DEFAULT_ISSUED_AT = Date.UTC(2024, 0, 15, 9, 30, 0);

describe('a receipt of each type', () => {
  for (const type of PEC_RECEIPT_TYPES) {
    it(`knows ${type} by its X-Ricevuta header`, async () => {
      const findings = await analysePecReceipt(buildReceipt({ type }));
      expect(findings.type).toBe(type);
      expect(findings.recognisedBy).toBe('header');
      expect(findings.referencedMessageId).toBe(REFERENCE);
      expect(findings.identificativo).toBe('opec21.20240115103000.04711.101.1.53@pec.gestore.example');
      expect(findings.issuer).toBe('Gestore Esempio S.p.A.');
      expect(findings.issuedAt).toBe(DEFAULT_ISSUED_AT);
      expect(findings.originalSubject).toBe('Fattura n. 2024/001');
      expect(findings.addressees).toEqual([{ address: 'mario.rossi@pec.cliente.example', certified: true }]);
    });

    it(`knows ${type} by daticert.xml alone`, async () => {
      const findings = await analysePecReceipt(buildReceipt({ type, omitReceiptHeader: true }));
      expect([findings.type, findings.recognisedBy]).toEqual([type, 'daticert']);
      expect(findings.referencedMessageId).toBe(REFERENCE);
    });

    it(`knows ${type} by its subject when only X-Riferimento-Message-ID says it is PEC`, async () => {
      const findings = await analysePecReceipt(
        buildReceipt({ type, omitReceiptHeader: true, omitDaticert: true, receiptKind: 'breve' }),
      );
      expect([findings.type, findings.recognisedBy]).toEqual([type, 'subject']);
      expect(findings.referencedMessageId).toBe(REFERENCE);
      expect(findings.identificativo).toBeNull();
    });
  }

  it('reads what daticert says of a delivery: the recipient, the kind of receipt, no error', async () => {
    const findings = await analysePecReceipt(
      buildReceipt({ type: 'avvenuta-consegna', recipient: 'ufficio@pec.cliente.example' }),
    );
    expect(findings).toMatchObject({
      recipient: 'ufficio@pec.cliente.example',
      receiptKind: 'completa',
      error: null,
      errorDetail: null,
    });
  });

  it("reads the error and the gestore's words of a failed delivery; accettazione names no single recipient", async () => {
    const failed = await analysePecReceipt(
      buildReceipt({
        type: 'errore-consegna',
        error: 'no-dominio',
        errorDetail: 'Dominio sconosciuto: cliente.example',
      }),
    );
    expect(failed).toMatchObject({
      error: 'no-dominio',
      errorDetail: 'Dominio sconosciuto: cliente.example',
      recipient: 'mario.rossi@pec.cliente.example',
    });
    expect((await analysePecReceipt(buildReceipt({ type: 'accettazione' }))).recipient).toBeNull();
  });

  it('takes the receipt kind from X-TipoRicevuta when there is no daticert', async () => {
    const findings = await analysePecReceipt(
      buildReceipt({ type: 'avvenuta-consegna', receiptKind: 'Sintetica', omitDaticert: true }),
    );
    expect(findings.receiptKind).toBe('sintetica');
  });
});

describe('a receipt cut short', () => {
  // Found by the hostile suite (seed 777): a part whose Content-Type header is cut has no contentType at all.
  it("still reads its headers when the cut falls in a part's Content-Type header", async () => {
    const whole = buildReceipt({ type: 'presa-in-carico' });
    const cut = whole.subarray(0, whole.indexOf('Content-Type: multipart/mixed') + 'Content-Type: '.length);
    expect(await analysePecReceipt(cut)).toMatchObject({
      type: 'presa-in-carico',
      recognisedBy: 'header',
      referencedMessageId: REFERENCE,
    });
  });
});

describe('the order of the evidence', () => {
  it('lets the header decide the 24-hour notice whose subject reads like the 12-hour warning', async () => {
    const subject = 'AVVISO DI MANCATA CONSEGNA PER SUP. TEMPO MASSIMO: Fattura n. 2024/001';
    expect((await analysePecReceipt(buildReceipt({ type: 'errore-consegna', subject }))).type).toBe('errore-consegna');
    const bySubject = await analysePecReceipt(
      buildReceipt({ type: 'errore-consegna', subject, omitReceiptHeader: true, omitDaticert: true }),
    );
    expect([bySubject.type, bySubject.recognisedBy]).toEqual(['preavviso-errore-consegna', 'subject']);
  });

  it('reads X-Ricevuta trimmed and in any case, before a daticert that disagrees', async () => {
    const findings = await analysePecReceipt(
      buildReceipt({
        type: 'accettazione',
        extraHeaders: ['X-Ricevuta:   Avvenuta-CONSEGNA  '],
        omitReceiptHeader: true,
      }),
    );
    expect([findings.type, findings.recognisedBy]).toEqual(['avvenuta-consegna', 'header']);
  });

  it('passes over an X-Ricevuta value that is no receipt type to daticert', async () => {
    const findings = await analysePecReceipt(
      buildReceipt({
        type: 'presa-in-carico',
        omitReceiptHeader: true,
        extraHeaders: ['X-Ricevuta: ricevuta-sconosciuta'],
      }),
    );
    expect([findings.type, findings.recognisedBy]).toEqual(['presa-in-carico', 'daticert']);
  });

  it('knows the virus wordings by subject', async () => {
    const subjectOnly = { omitReceiptHeader: true, omitDaticert: true } as const;
    expect(
      (await analysePecReceipt(buildReceipt({ type: 'non-accettazione', error: 'virus', ...subjectOnly }))).type,
    ).toBe('non-accettazione');
    expect(
      (await analysePecReceipt(buildReceipt({ type: 'errore-consegna', error: 'virus', ...subjectOnly }))).type,
    ).toBe('errore-consegna');
  });
});

describe('subjects', () => {
  const bySubject = (subject: string, type: PecReceiptType = 'avvenuta-consegna') =>
    analysePecReceipt(buildReceipt({ type, subject, omitReceiptHeader: true, omitDaticert: true }));

  it('decodes an encoded subject before reading its prefix (RFC 2047 Q and B)', async () => {
    expect((await bySubject('=?UTF-8?Q?CONSEGNA:_Fattura_n=C2=B0_7_=E2=80=93_perch=C3=A9?=')).type).toBe(
      'avvenuta-consegna',
    );
    const encoded = Buffer.from('AVVISO DI MANCATA CONSEGNA: Società', 'utf8').toString('base64');
    expect((await bySubject(`=?UTF-8?B?${encoded}?=`, 'errore-consegna')).type).toBe('errore-consegna');
  });

  it('reads a folded, lower-case prefix', async () => {
    expect((await bySubject('avviso di mancata\r\n consegna: Fattura', 'errore-consegna')).type).toBe(
      'errore-consegna',
    );
  });

  it("finds no receipt in an envelope's or an anomaly's prefix even beside a reference", async () => {
    expect((await bySubject('POSTA CERTIFICATA: CONSEGNA: Fattura')).type).toBeNull();
    expect((await bySubject('ANOMALIA MESSAGGIO: Fattura')).type).toBeNull();
  });
});

/** daticert.xml's fields for an avvenuta-consegna, changed where a test says. */
const fieldsOf = (override: Partial<DaticertFields>): DaticertFields => ({
  tipo: 'avvenuta-consegna',
  error: 'nessuno',
  sender: 'fatture@pec.acme.example',
  addressees: [{ address: 'mario.rossi@pec.cliente.example', certified: true }],
  originalSubject: 'Fattura',
  issuer: 'Gestore',
  issuedAt: { day: '15/01/2024', time: '10:30:00', zone: '+0100' },
  identificativo: 'id-1',
  msgid: REFERENCE,
  receiptKind: 'completa',
  recipient: 'mario.rossi@pec.cliente.example',
  errorDetail: null,
  ...override,
});

describe('daticert.xml', () => {
  const fields = fieldsOf;
  const withDaticert = (daticert: string) =>
    analysePecReceipt(buildReceipt({ type: 'avvenuta-consegna', omitReference: true, daticert }));

  it('decodes XML entities: the escaped msgid, named and numeric references', async () => {
    const xml = daticertXml(
      fields({ originalSubject: 'Preventivo "A&B" <urgente>', msgid: '<a&b@acme.example>' }),
    ).replace('Preventivo', 'Preventivo &#224; &#xE8;');
    const findings = await withDaticert(xml);
    expect(xml).toContain('&lt;a&amp;b@acme.example&gt;');
    expect(findings.originalSubject).toBe('Preventivo à è "A&B" <urgente>');
    expect(findings.referencedMessageId).toBe('<a&b@acme.example>');
  });

  it('reads a daticert written in ISO-8859-1', async () => {
    const xml = daticertXml(fields({ originalSubject: 'Società è già' })).replace(
      'encoding="UTF-8"',
      'encoding="ISO-8859-1"',
    );
    const findings = await analysePecReceipt(
      buildReceipt({ type: 'avvenuta-consegna', daticert: Buffer.from(xml, 'latin1') }),
    );
    expect(findings.originalSubject).toBe('Società è già');
  });

  const instants: Array<[string, string, string, number | null]> = [
    ['15/01/2024', '10:30:00', '+0100', Date.UTC(2024, 0, 15, 9, 30)],
    ['15/07/2024', '10:30:00', '+0200', Date.UTC(2024, 6, 15, 8, 30)],
    ['31/12/2023', '23:59:59', '-0500', Date.UTC(2024, 0, 1, 4, 59, 59)],
    ['01/03/2024', '00:15:00', '+01:00', Date.UTC(2024, 1, 29, 23, 15)],
    ['5/3/2024', '7:05', '+0000', Date.UTC(2024, 2, 5, 7, 5)],
    ['31/02/2024', '10:00:00', '+0100', null],
    ['15/01/2024', '24:00:00', '+0100', null],
    ['2024-01-15', '10:00:00', '+0100', null],
    ['15/01/2024', '10:00:00', 'CET', null],
  ];
  for (const [day, time, zone, expected] of instants) {
    it(`reads ${day} ${time} ${zone} as ${expected === null ? 'no instant' : new Date(expected).toISOString()}`, async () => {
      expect((await withDaticert(daticertXml(fields({ issuedAt: { day, time, zone } })))).issuedAt).toBe(expected);
    });
  }

  it('names the kind of receipt by <ricevuta tipo> before X-TipoRicevuta', async () => {
    const findings = await analysePecReceipt(
      buildReceipt({ type: 'avvenuta-consegna', daticert: daticertXml(fields({ receiptKind: 'Breve' })) }),
    );
    expect(findings.receiptKind).toBe('breve');
  });

  it('lists every addressee, certified or not', async () => {
    const addressees = [
      { address: 'mario.rossi@pec.cliente.example', certified: true },
      { address: 'anna.bianchi@cliente.example', certified: false },
      { address: 'protocollo@pec.comune.example', certified: true },
    ];
    const findings = await analysePecReceipt(buildReceipt({ type: 'accettazione', addressees }));
    expect(findings.addressees).toEqual(addressees);
  });

  it('takes the Message-ID from daticert without X-Riferimento-Message-ID, and brackets one that has none', async () => {
    expect((await withDaticert(daticertXml(fields({ msgid: '  bare-id@acme.example ' })))).referencedMessageId).toBe(
      '<bare-id@acme.example>',
    );
    const header = await analysePecReceipt(
      buildReceipt({
        type: 'accettazione',
        omitReference: true,
        extraHeaders: ['X-Riferimento-Message-ID:  other-id@acme.example  '],
      }),
    );
    expect(header.referencedMessageId).toBe('<other-id@acme.example>');
  });

  it("refuses a daticert whose entities expand past 64 KiB (300 MB here), and keeps the header's type", async () => {
    const bomb = daticertXml(fields({}))
      .replace(
        '<!DOCTYPE postacert SYSTEM "Postacert.dtd">',
        `<!DOCTYPE postacert [<!ENTITY a "${'ha'.repeat(500)}">]>`,
      )
      .replace('<oggetto>Fattura', `<oggetto>${'&a;'.repeat(300_000)}`);
    const findings = await analysePecReceipt(buildReceipt({ type: 'avvenuta-consegna', daticert: bomb }));
    expect([findings.type, findings.identificativo, findings.originalSubject]).toEqual([
      'avvenuta-consegna',
      null,
      null,
    ]);
  });

  it('ignores a daticert.xml over 1 MiB, and still knows the type by subject beside it', async () => {
    const huge = daticertXml(fields({})).replace('</postacert>', `<pad>${'x'.repeat(1024 * 1024)}</pad></postacert>`);
    const findings = await analysePecReceipt(
      buildReceipt({ type: 'avvenuta-consegna', omitReceiptHeader: true, omitReference: true, daticert: huge }),
    );
    expect([findings.type, findings.recognisedBy, findings.identificativo]).toEqual([
      'avvenuta-consegna',
      'subject',
      null,
    ]);
  });
});

describe('X-Genro-Mail-ID', () => {
  it('comes from the original a full receipt carries', async () => {
    expect((await analysePecReceipt(buildReceipt({ type: 'avvenuta-consegna', mailId: 'genro-7f3a' }))).mailId).toBe(
      'genro-7f3a',
    );
  });

  it("is read from a folded header of the original, and the receipt's own header comes first", async () => {
    const original = Buffer.from(
      buildOriginal({
        messageId: REFERENCE,
        mailId: null,
        subject: 'Fattura',
        from: 'a@pec.acme.example',
        to: ['b@pec.cliente.example'],
      })
        .toString('utf8')
        .replace('MIME-Version', 'X-Genro-Mail-ID:\r\n   folded-42\r\nMIME-Version'),
    );
    expect((await analysePecReceipt(buildReceipt({ type: 'avvenuta-consegna', original }))).mailId).toBe('folded-42');
    const own = await analysePecReceipt(
      buildReceipt({ type: 'avvenuta-consegna', original, extraHeaders: ['X-Genro-Mail-ID:  on-receipt-1 '] }),
    );
    expect(own.mailId).toBe('on-receipt-1');
  });

  it('is null when the original has none, and for a receipt that carries no original', async () => {
    expect((await analysePecReceipt(buildReceipt({ type: 'avvenuta-consegna', mailId: null }))).mailId).toBeNull();
    expect((await analysePecReceipt(buildReceipt({ type: 'accettazione' }))).mailId).toBeNull();
  });

  it('makes a subject-only receipt credible when it is the only PEC reference', async () => {
    const findings = await analysePecReceipt(
      buildReceipt({ type: 'avvenuta-consegna', omitReceiptHeader: true, omitDaticert: true, omitReference: true }),
    );
    expect([findings.type, findings.recognisedBy, findings.mailId, findings.referencedMessageId]).toEqual([
      'avvenuta-consegna',
      'subject',
      'genro-mail-1',
      null,
    ]);
  });
});

describe('mail that is not a receipt', () => {
  const crlf = (text: string): Buffer => Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'utf8');
  const ordinary = (subject: string, extra = ''): Buffer =>
    crlf(`From: Luca Verdi <luca.verdi@cliente.example>
To: fatture@pec.acme.example
Subject: ${subject}
Message-ID: <note-1@cliente.example>
Date: Tue, 16 Jan 2024 08:00:00 +0100
${extra}MIME-Version: 1.0
Content-Type: text/plain; charset=UTF-8

La merce arriva domani mattina.
`);

  it('is a transport envelope (posta certificata): mail received, though it names a Message-ID', async () => {
    expect(await analysePecReceipt(buildEnvelope())).toEqual(NOT_A_RECEIPT);
    expect(await analysePecReceipt(buildEnvelope({ subject: 'CONSEGNA: merce', mailId: 'genro-x' }))).toEqual(
      NOT_A_RECEIPT,
    );
  });

  it("is what daticert calls posta-certificata, even under a receipt's subject and without X-Trasporto", async () => {
    const envelope = daticertXml({ ...fieldsOf({}), tipo: 'posta-certificata' });
    expect(
      await analysePecReceipt(buildReceipt({ type: 'avvenuta-consegna', omitReceiptHeader: true, daticert: envelope })),
    ).toEqual(NOT_A_RECEIPT);
  });

  it('is an anomaly (ANOMALIA MESSAGGIO), with or without a daticert', async () => {
    expect(await analysePecReceipt(buildEnvelope({ transport: 'errore' }))).toEqual(NOT_A_RECEIPT);
    expect(await analysePecReceipt(buildEnvelope({ transport: 'errore', daticertType: 'posta-certificata' }))).toEqual(
      NOT_A_RECEIPT,
    );
  });

  it('is ordinary mail, and ordinary mail whose subject starts "CONSEGNA:"', async () => {
    expect(await analysePecReceipt(ordinary('Riunione di giovedì'))).toEqual(NOT_A_RECEIPT);
    expect(await analysePecReceipt(ordinary('CONSEGNA: merce in arrivo'))).toEqual(NOT_A_RECEIPT);
    expect(
      await analysePecReceipt(ordinary('ACCETTAZIONE: preventivo', 'In-Reply-To: <fattura-2024-001@acme.example>\n')),
    ).toEqual(NOT_A_RECEIPT);
  });

  it('is "CONSEGNA:" mail forwarding a message without X-Genro-Mail-ID', async () => {
    const forwarded = buildOriginal({
      messageId: '<x@cliente.example>',
      mailId: null,
      subject: 'Bolla',
      from: 'a@cliente.example',
      to: ['b@cliente.example'],
    }).toString('utf8');
    const raw = crlf(`From: luca.verdi@cliente.example
To: fatture@pec.acme.example
Subject: CONSEGNA: bolla inoltrata
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="fw"

--fw
Content-Type: text/plain

Vedi sotto.
--fw
Content-Type: message/rfc822

${forwarded}
--fw--
`);
    expect(await analysePecReceipt(raw)).toEqual(NOT_A_RECEIPT);
  });

  it('is a message an envelope says it carries, whatever its subject (X-Trasporto)', async () => {
    const raw = ordinary(
      'CONSEGNA: merce',
      'X-Trasporto: posta-certificata\nX-Riferimento-Message-ID: <m@cliente.example>\n',
    );
    expect(await analysePecReceipt(raw)).toEqual(NOT_A_RECEIPT);
  });

  it('is an empty message, and bytes that are no mail', async () => {
    expect(await analysePecReceipt(Buffer.alloc(0))).toEqual(NOT_A_RECEIPT);
    expect(await analysePecReceipt(Buffer.from([0, 255, 13, 10, 13, 10, 60, 112]))).toEqual(NOT_A_RECEIPT);
  });
});
