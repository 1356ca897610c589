import 'server-only';

/**
 * Create and rotate mutations take an optional `idempotencyKey`: a form sends one key per opening, so a resubmit
 * after a lost answer returns the first result instead of creating a second resource.
 */
export interface IdempotencyParts {
  /** Appended to the operation's variable declarations. */
  declaration: string;
  /** Appended to the mutation field's arguments. */
  argument: string;
  variables: { idempotencyKey?: string };
}

/** The pieces that add `idempotencyKey` to a mutation, or nothing when the form has no key. */
export function idempotencyParts(key: string | null): IdempotencyParts {
  if (key === null) return { declaration: '', argument: '', variables: {} };
  return {
    declaration: ', $idempotencyKey: String',
    argument: ', idempotencyKey: $idempotencyKey',
    variables: { idempotencyKey: key },
  };
}

/** A key the API accepts: printable ASCII, at most 128 characters (the REST Idempotency-Key rule). */
export function isIdempotencyKey(value: unknown): value is string {
  return typeof value === 'string' && /^[\x21-\x7e]{1,128}$/.test(value);
}
