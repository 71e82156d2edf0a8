/** What an adapter test asks of a webhook reading: its events (a refusal fails the test), or its problem. */
import { expect } from 'vitest';
import type { WebhookReading } from '../../src/ingress/webhooks/adapter.js';

export function eventsOf(reading: WebhookReading) {
  if (!reading.ok) throw new Error(`refused: ${JSON.stringify(reading.problem)}`);
  return reading.events;
}

export function problemOf(reading: WebhookReading) {
  expect(reading.ok).toBe(false);
  return reading.ok ? null : reading.problem;
}
