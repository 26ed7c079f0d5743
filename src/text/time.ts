// A time as a person reads it, in one format everywhere: "3 minutes ago" (Intl.RelativeTimeFormat, in the given
// language) with the exact time beside it — on hover where there is one (the panel, a tooltip), in parentheses in
// plain text: "3 minutes ago (2026-12-01 19:35:53 UTC)". A text without a clock (a gate reason, computed once)
// says the exact time alone, never the raw ISO string. Pure and free of Node: the panel's browser bundle, the
// core and both front ends share it.
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86400],
  ['month', 30 * 86400],
  ['week', 7 * 86400],
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

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

/** The exact time, readable: "2026-12-01 19:35:53 UTC" (for a hover, parentheses, or a text without a clock). */
export function exactTime(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t)
    ? iso
    : new Date(t)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC');
}

/** A time in plain text: "3 minutes ago (2026-12-01 19:35:53 UTC)"; a value that is not a time as it is. */
export function whenText(iso: string, now: number = Date.now(), language = 'en'): string {
  if (Number.isNaN(Date.parse(iso))) return iso;
  return `${relativeTime(iso, now, language)} (${exactTime(iso)})`;
}
