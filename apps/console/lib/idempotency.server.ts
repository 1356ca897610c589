import 'server-only';
import { graphql } from './graphql.server';

/**
 * Create and rotate mutations take an optional `idempotencyKey`: a form sends one key per opening, so a
 * resubmit after a lost answer returns the first result instead of creating a second resource. An API that
 * does not know the argument yet is asked again after a while, so an upgraded API is used without a restart.
 */
const RECHECK_MS = 60_000;
let known: { mutations: Set<string>; checkedAt: number } | null = null;

const MUTATION_ARGS = `query ConsoleMutationArguments { __type(name: "Mutation") { fields { name args { name } } } }`;

async function mutationsWithKey(): Promise<Set<string>> {
  if (known && (known.mutations.size > 0 || Date.now() - known.checkedAt < RECHECK_MS)) return known.mutations;
  try {
    const data = await graphql<{ __type: { fields: { name: string; args: { name: string }[] }[] } | null }>(
      null,
      MUTATION_ARGS,
    );
    const fields = data.__type?.fields ?? [];
    const mutations = new Set(fields.filter((f) => f.args.some((a) => a.name === 'idempotencyKey')).map((f) => f.name));
    known = { mutations, checkedAt: Date.now() };
    return mutations;
  } catch {
    // Not knowing costs only the protection against a double submit; the mutation itself goes ahead.
    return new Set();
  }
}

export interface IdempotencyParts {
  /** Appended to the operation's variable declarations. */
  declaration: string;
  /** Appended to the mutation field's arguments. */
  argument: string;
  variables: { idempotencyKey?: string };
}

/** The pieces that add `idempotencyKey` to `mutation`, or nothing when the API does not take it (yet). */
export async function idempotencyParts(mutation: string, key: string | null): Promise<IdempotencyParts> {
  if (key === null || !(await mutationsWithKey()).has(mutation))
    return { declaration: '', argument: '', variables: {} };
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
