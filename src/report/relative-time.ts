// A time as a person reads it: "3 minutes ago", "yesterday", in the given language (Intl.RelativeTimeFormat).
// Pure and free of Node, so the panel's browser bundle and the extension host share it.
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [['year', 365 * 86400], ['month', 30 * 86400], ['week', 7 * 86400], ['day', 86400], ['hour', 3600], ['minute', 60], ['second', 1]];

export function relativeTime(iso: string, now: number = Date.now(), language = 'en'): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((t - now) / 1000);
  const fmt = new Intl.RelativeTimeFormat(language, { numeric: 'auto' });
  // Under 45 seconds reads as "now" (a clock skew of a few seconds is not "in 3 seconds").
  if (Math.abs(s) < 45) return fmt.format(0, 'second');
  for (const [unit, secs] of UNITS) if (Math.abs(s) >= secs) return fmt.format(Math.round(s / secs), unit);
  return iso;
}

/** The exact time for a hover: the ISO time in UTC, readable. */
export function exactTime(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}
