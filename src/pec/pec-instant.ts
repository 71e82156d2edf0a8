/**
 * daticert.xml's `<data zona="+0100"><giorno>dd/mm/yyyy</giorno><ora>hh:mm:ss</ora></data>`
 * as an instant: the day and time are the gestore's local time, the zone its
 * offset from UTC (Italy writes +0100 in winter, +0200 in summer).
 */

const DAY = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;
const TIME = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/;
/** `+0100`, and the `+01:00` some gestori write. */
const ZONE = /^([+-])(\d{2}):?(\d{2})$/;

const MINUTE_MS = 60_000;

/** Epoch ms, or null when any part is malformed or names no real moment (31/02, 25:00, +2500). */
export function pecInstant(day: string, time: string, zone: string): number | null {
  // The patterns are anchored and bounded; the length check keeps them off long hostile text.
  if (day.length > 12 || time.length > 10 || zone.length > 8) return null;
  const d = DAY.exec(day.trim());
  const t = TIME.exec(time.trim());
  const z = ZONE.exec(zone.trim());
  if (d === null || t === null || z === null) return null;
  const [dayOfMonth, month, year] = [Number(d[1]), Number(d[2]), Number(d[3])];
  const [hours, minutes, seconds] = [Number(t[1]), Number(t[2]), Number(t[3] ?? '0')];
  const [zoneHours, zoneMinutes] = [Number(z[2]), Number(z[3])];
  if (hours > 23 || minutes > 59 || seconds > 59 || zoneHours > 14 || zoneMinutes > 59) return null;
  const local = Date.UTC(year, month - 1, dayOfMonth, hours, minutes, seconds);
  const check = new Date(local);
  // Date.UTC rolls 31/02 over into March: a day that does not exist is no date.
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== dayOfMonth)
    return null;
  const offsetMinutes = (z[1] === '-' ? -1 : 1) * (zoneHours * 60 + zoneMinutes);
  return local - offsetMinutes * MINUTE_MS;
}
