import { describe, expect, it } from 'vitest';
import { receiptTypeBySubject } from './pec-subject.js';

describe('receiptTypeBySubject', () => {
  const cases: Array<[string, string | null]> = [
    ['ACCETTAZIONE: Fattura', 'accettazione'],
    ['AVVISO DI NON ACCETTAZIONE: Fattura', 'non-accettazione'],
    ['AVVISO DI NON ACCETTAZIONE PER VIRUS: Fattura', 'non-accettazione'],
    ['PRESA IN CARICO: Fattura', 'presa-in-carico'],
    ['CONSEGNA: Fattura', 'avvenuta-consegna'],
    ['AVVISO DI MANCATA CONSEGNA: Fattura', 'errore-consegna'],
    ['AVVISO DI MANCATA CONSEGNA PER VIRUS: Fattura', 'errore-consegna'],
    ['AVVISO DI MANCATA CONSEGNA PER SUP. TEMPO MASSIMO: Fattura', 'preavviso-errore-consegna'],
    ['PROBLEMA DI SICUREZZA: Fattura', 'rilevazione-virus'],
    ['POSTA CERTIFICATA: CONSEGNA: Fattura', null],
    ['ANOMALIA MESSAGGIO: Fattura', null],
    ['Re: CONSEGNA: Fattura', null],
    ['CONSEGNA Fattura', null],
    ['AVVISO DI MANCATA CONSEGNA PER ALTRO: Fattura', null],
    ['', null],
  ];
  for (const [subject, type] of cases) {
    it(`reads "${subject}" as ${type ?? 'no receipt'}`, () => {
      expect(receiptTypeBySubject(subject)).toBe(type);
    });
  }

  it('takes any case and any run of whitespace as one space', () => {
    expect(receiptTypeBySubject('  avviso di  mancata\tconsegna:Fattura')).toBe('errore-consegna');
    expect(receiptTypeBySubject('Presa In Carico:   x')).toBe('presa-in-carico');
  });

  it('reads only the head of a long subject', () => {
    expect(receiptTypeBySubject(`CONSEGNA: ${'x'.repeat(1_000_000)}`)).toBe('avvenuta-consegna');
    expect(receiptTypeBySubject(`${' '.repeat(1_000_000)}CONSEGNA: x`)).toBeNull();
  });
});
