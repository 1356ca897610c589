import {
  requestFingerprint,
  ServiceError,
  validateIdempotencyKey,
  type CallContext,
  type IdempotentResult,
  type RunOnceOutcome,
} from '@svc/core';
import { callContext, type GraphqlContext } from './context.js';

/** The argument every creating or rotating mutation takes (optional; without it the mutation just runs). */
export const IDEMPOTENCY_KEY_ARG = 'idempotencyKey';
export const IDEMPOTENCY_KEY_OPTIONS = {
  nullable: true,
  description:
    'Optional, 1-128 printable ASCII characters. A retry with the same key and arguments returns the first ' +
    'answer instead of running again (kept 35 days); other arguments give idempotency_conflict.',
} as const;

export interface IdempotentMutation<T> {
  /** The mutation's name; with `params` and `input` it identifies the request for its key. */
  operation: string;
  /** Path-like identifiers (the REST path parameters), e.g. the endpoint ID of a rotation. */
  params?: Record<string, string>;
  /** The parsed input after defaults, as the service receives it. */
  input: unknown;
  run(ctx: CallContext): Promise<T>;
  /** What is kept for replays, as JSON (defaults to the result). Never a secret. */
  stored?(result: T): unknown;
  /** Rebuilds the answer of a replay from what was kept (defaults to the kept value). */
  replay?(stored: unknown, replay: { ctx: CallContext; sameKey: boolean }): Promise<T>;
  /**
   * A mutation whose service keeps the key's lock and record itself, in the transaction of its own work (message
   * admission batches them), with the same rules: used instead of `run` in IdempotencyService.runOnce.
   */
  runOnce?(
    ctx: CallContext,
    idempotency: { key: string; fingerprint: string; keep(value: T): IdempotentResult<T> },
  ): Promise<RunOnceOutcome<T>>;
}

function checkKey(key: string): string {
  try {
    return validateIdempotencyKey(key);
  } catch {
    throw new ServiceError('invalid_field', 'idempotencyKey must be 1 to 128 printable ASCII characters', {
      field: IDEMPOTENCY_KEY_ARG,
    });
  }
}

/**
 * Runs a mutation at most once per idempotency key, with the core idempotency service the REST pipeline uses:
 * the work and the kept response commit in one transaction; a retry with the same key and the same request gets
 * the kept response, one with another request idempotency_conflict, one while the first still runs
 * request_in_progress. GraphQL requests are told apart from REST ones (`graphql.` before the operation), because
 * the kept response is in the transport's own shape.
 */
export async function runIdempotent<T>(
  context: GraphqlContext,
  key: string | null | undefined,
  mutation: IdempotentMutation<T>,
): Promise<T> {
  const ctx = callContext(context);
  if (key === undefined || key === null) return mutation.run(ctx);
  const fingerprint = requestFingerprint(`graphql.${mutation.operation}`, mutation.params ?? {}, mutation.input);
  const keep = (value: T): IdempotentResult<T> => {
    const kept = mutation.stored ? mutation.stored(value) : value;
    return { response: { status: 200, headers: {}, body: Buffer.from(JSON.stringify(kept), 'utf8') }, value };
  };
  const checked = checkKey(key);
  const outcome = mutation.runOnce
    ? await mutation.runOnce(ctx, { key: checked, fingerprint, keep })
    : await context.services.idempotency.runOnce(ctx.actor, checked, fingerprint, async (tx) =>
        keep(await mutation.run({ actor: ctx.actor, tx })),
      );
  if (outcome.outcome === 'executed') return outcome.value;
  const { body, keyId } = outcome.response;
  const stored: unknown = body ? JSON.parse(body.toString('utf8')) : null;
  // JSON keeps dates as ISO-8601 text, which the DateTimeISO scalar serialises unchanged.
  if (!mutation.replay) return stored as T;
  return mutation.replay(stored, { ctx, sameKey: keyId === ctx.actor.keyId });
}
