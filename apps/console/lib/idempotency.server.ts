import 'server-only';

/**
 * Create and rotate mutations take an optional `idempotencyKey`: a form sends one key per opening, so a resubmit
 * after a lost answer returns the first result instead of creating a second resource. Without a key the variable is
 * left out rather than sent as null.
 */
export function idempotencyVariable(key: string | null): { idempotencyKey?: string } {
  return key === null ? {} : { idempotencyKey: key };
}

/** A key the API accepts: printable ASCII, at most 128 characters (the REST Idempotency-Key rule). */
export function isIdempotencyKey(value: unknown): value is string {
  return typeof value === 'string' && /^[\x21-\x7e]{1,128}$/.test(value);
}
