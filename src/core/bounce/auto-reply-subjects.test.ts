import { describe, expect, it } from 'vitest';
import { AUTO_REPLY_SUBJECT_PREFIXES, isAutoReplySubject } from './auto-reply-subjects.js';

describe('auto-reply subjects', () => {
  it("knows an auto-reply's subject prefix in the common languages", () => {
    const subjects = [
      'Out of Office: Your order 42',
      'Autoreply: Invoice',
      'Automatic reply: Invoice',
      'Auto-Reply: Invoice',
      'Automatische Antwort: Ihre Bestellung',
      'Abwesenheitsnotiz: Rechnung',
      'Réponse automatique : Votre commande',
      'Respuesta automática: Su pedido',
      'Risposta automatica: Il suo ordine',
      'Resposta automática: Pedido',
      'Automatisch antwoord: Uw bestelling',
      'Automatiskt svar: Din order',
      'Automatyczna odpowiedź: Zamówienie',
      '  Automatická odpověď: Objednávka',
    ];
    for (const subject of subjects) expect(isAutoReplySubject(subject), subject).toBe(true);
    expect(AUTO_REPLY_SUBJECT_PREFIXES.length).toBeGreaterThanOrEqual(10);
  });

  it('takes a prefix at the start only, so a subject that merely mentions one is ordinary mail', () => {
    for (const subject of [
      'Re: our automatic reply settings',
      'Fwd: Out of office policy',
      'Automation report',
      'Your order',
    ]) {
      expect(isAutoReplySubject(subject), subject).toBe(false);
    }
  });
});
