// Retry-After (RFC 9110 section 10.2.3): delay-seconds or an HTTP-date. Anything else is ignored (null), so a
// receiver cannot push retries around with a malformed value.

const DELAY_SECONDS = /^\d+$/;
// IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the obsolete RFC 850 form ("Sunday, 06-Nov-94 08:49:37 GMT")
// and asctime ("Sun Nov  6 08:49:37 1994") all start with a day name; Date.parse reads all three.
const HTTP_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? [0-9A-Za-z :-]+$/;

/**
 * Seconds to wait from `nowMs`, rounded up; 0 for a date in the past; null when absent or malformed.
 * Repeated headers: the first value counts.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | null {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (raw === undefined || raw === '') return null;
  if (DELAY_SECONDS.test(raw)) {
    const seconds = Number(raw);
    return Number.isSafeInteger(seconds) ? seconds : null;
  }
  if (!HTTP_DATE.test(raw)) return null;
  const at = Date.parse(raw);
  if (!Number.isFinite(at)) return null;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}
