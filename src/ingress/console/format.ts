/** How the console writes instants, durations and statuses (UTC everywhere: operators compare with logs). */
import type { MessageStatus } from '../../core/message/index.js';

/** Epoch seconds as `2026-11-23 21:04:05Z`; a dash for none. */
export function when(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '–';
  return new Date(seconds * 1000)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** Epoch ms, as when(). */
export const whenMs = (ms: number | null | undefined): string =>
  ms === null || ms === undefined ? '–' : when(Math.floor(ms / 1000));

export function ago(seconds: number, nowMs: number): string {
  const delta = Math.max(0, Math.floor(nowMs / 1000) - seconds);
  if (delta < 90) return `${delta} s`;
  if (delta < 5400) return `${Math.round(delta / 60)} min`;
  if (delta < 172_800) return `${Math.round(delta / 3600)} h`;
  return `${Math.round(delta / 86_400)} d`;
}

/** The CSS class of a status badge: one hue per family, never colour alone (the word is always there). */
export function statusClass(status: MessageStatus | string): string {
  if (status === 'sent') return 'badge ok';
  if (status === 'error' || status === 'bounced') return 'badge bad';
  if (status === 'suspended') return 'badge held';
  return 'badge wait';
}

/** `2026-11-23T10:00` (a datetime-local field, read as UTC) → epoch seconds; null when empty or unreadable. */
export function parseUtcInput(text: string | undefined): number | null {
  if (text === undefined || text === '') return null;
  const ms = Date.parse(/Z$|[+-]\d\d:\d\d$/.test(text) ? text : `${text}Z`);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}
