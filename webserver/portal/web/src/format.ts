// How numbers and times read in the portal. Pure functions, no DOM.

/** dash stands for "no value" in tables. */
export const dash = "—";

function pad2(n: number): string {
  return n < 10 ? "0" + n : String(n);
}

/**
 * clock turns seconds since the plan day's midnight into HH:MM. Routes may
 * run past midnight, so hours go on past 24 ("25:10") rather than wrap,
 * which would make a late stop look early.
 */
export function clock(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return dash;
  const minutes = Math.floor(seconds / 60);
  return pad2(Math.floor(minutes / 60)) + ":" + pad2(minutes % 60);
}

/** km shows metres as kilometres with one decimal: 12345 → "12.3 km". */
export function km(metres: number): string {
  if (!Number.isFinite(metres)) return dash;
  return (metres / 1000).toFixed(1) + " km";
}

/** hmm shows a duration as h:mm (drive time): 18420 → "5:07". */
export function hmm(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return dash;
  const minutes = Math.round(seconds / 60);
  return Math.floor(minutes / 60) + ":" + pad2(minutes % 60);
}

/** percent shows a 0–1 fraction as a whole percentage: 0.834 → "83%". */
export function percent(fraction: number): string {
  if (!Number.isFinite(fraction)) return dash;
  return Math.round(fraction * 100) + "%";
}

/** late says whether a stop is late, in whole minutes rounded up so any lateness shows. */
export function late(lateSeconds: number): string {
  return lateSeconds > 0 ? "Late " + Math.ceil(lateSeconds / 60) + " min" : "On time";
}

/** window shows a time window ("09:00–12:00"), either side alone, or a dash. */
export function timeWindow(start: string | null | undefined, end: string | null | undefined): string {
  if (start && end) return start + "–" + end;
  if (start) return "from " + start;
  if (end) return "until " + end;
  return dash;
}

/**
 * ago says how long before now an ISO timestamp was, as people say it
 * ("just now", "3 min ago", "5 h ago", "2 days ago"); older than a month it
 * gives the date.
 */
export function ago(iso: string, now: number = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return dash;
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 60) return "just now";
  const m = Math.floor(s / 60);
  if (m < 60) return m + " min ago";
  const hours = Math.floor(m / 60);
  if (hours < 24) return hours + " h ago";
  const days = Math.floor(hours / 24);
  if (days < 31) return days === 1 ? "1 day ago" : days + " days ago";
  return iso.slice(0, 10);
}

/** dateTime shows an ISO timestamp in the reader's locale and time zone. */
export function dateTime(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  return new Date(t).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** plural picks the noun form: plural(1, "stop") → "1 stop". */
export function plural(n: number, noun: string, nouns = noun + "s"): string {
  return n + " " + (n === 1 ? noun : nouns);
}
