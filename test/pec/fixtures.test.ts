/**
 * The static PEC fixtures (fixtures/README.md), asserted field by field: what
 * a correct parser finds in each, whole.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { analysePecReceipt } from '../../src/pec/pec-receipt-parser.js';
import { NOT_A_RECEIPT, type PecReceiptFindings } from '../../src/core/pec/pec.js';

const fixture = (name: string): Buffer => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

const EXPECTED: Record<string, PecReceiptFindings> = {
  'accettazione.eml': {
    type: 'accettazione',
    recognisedBy: 'header',
    referencedMessageId: '<20240712.ordine-5512@mail.acme.example>',
    mailId: null,
    identificativo: 'opec21.20240712164207.22871.433.1.66@pec.gestore.example',
    recipient: null,
    addressees: [
      { address: 'acquisti@pec.cliente.example', certified: true },
      { address: 'magazzino@cliente.example', certified: false },
    ],
    error: null,
    errorDetail: null,
    issuer: 'Gestore Esempio S.p.A.',
    issuedAt: Date.UTC(2024, 6, 12, 14, 42, 7),
    receiptKind: null,
    originalSubject: 'Ordine 5512 - conferma',
  },
  'avvenuta-consegna-completa.eml': {
    type: 'avvenuta-consegna',
    recognisedBy: 'header',
    referencedMessageId: '<fattura-2024-118@mail.acme.example>',
    mailId: 'genro-mail-7f3a9c',
    identificativo: 'opec21.20240203090531.30112.872.1.61@pec.gestore.example',
    recipient: 'amministrazione@pec.cliente.example',
    addressees: [{ address: 'amministrazione@pec.cliente.example', certified: true }],
    error: null,
    errorDetail: null,
    issuer: 'Gestore Esempio S.p.A.',
    issuedAt: Date.UTC(2024, 1, 3, 8, 5, 31),
    receiptKind: 'completa',
    originalSubject: 'Fattura n. 118 – perché è urgente',
  },
  'errore-consegna.eml': {
    type: 'errore-consegna',
    recognisedBy: 'header',
    referencedMessageId: '<sollecito-77@mail.acme.example>',
    mailId: null,
    identificativo: 'opec21.20231028235958.01234.567.1.60@pec.gestore.example',
    recipient: 'ufficio.legale@pec.cliente.example',
    addressees: [{ address: 'ufficio.legale@pec.cliente.example', certified: true }],
    error: 'no-dest',
    errorDetail: '5.1.1 - Casella inesistente: ufficio.legale@pec.cliente.example',
    issuer: 'Gestore Esempio S.p.A.',
    issuedAt: Date.UTC(2023, 9, 28, 21, 59, 58),
    receiptKind: null,
    originalSubject: 'Sollecito <pagamento> & interessi',
  },
  'subject-only.eml': {
    ...NOT_A_RECEIPT,
    type: 'non-accettazione',
    recognisedBy: 'subject',
    referencedMessageId: '<promemoria-3@mail.acme.example>',
  },
  'posta-certificata.eml': NOT_A_RECEIPT,
  'anomalia.eml': NOT_A_RECEIPT,
};

describe('the PEC fixtures', () => {
  for (const [name, expected] of Object.entries(EXPECTED)) {
    it(`finds in ${name} exactly what it should`, async () => {
      expect(await analysePecReceipt(fixture(name))).toEqual(expected);
    });
  }
});

describe('mailproxy pec parse', () => {
  it('prints what the parser finds in a file, as one JSON object', async () => {
    const { execFileSync } = await import('node:child_process');
    const { fileURLToPath } = await import('node:url');
    const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
    const file = fileURLToPath(new URL('./fixtures/errore-consegna.eml', import.meta.url));
    const printed = JSON.parse(
      execFileSync(process.execPath, [cli, 'pec', 'parse', file], { encoding: 'utf8' }),
    ) as PecReceiptFindings;
    expect(printed).toEqual(EXPECTED['errore-consegna.eml']);
  });
});
