'use client';

import { useCallback, useState } from 'react';
import type { ActionResult } from './api-error';

/** Answers after which nobody knows whether the API did the work: a resubmit must repeat the same key. */
const OUTCOME_UNKNOWN = new Set(['temporarily_unavailable', 'internal_error', 'request_in_progress']);

/** True when nobody knows whether the API did the work, so a resubmit must repeat the same key. */
export function isOutcomeUnknown(code: string): boolean {
  return OUTCOME_UNKNOWN.has(code);
}

/** 128 random bits; getRandomValues works on plain-http origins too, where randomUUID does not exist. */
function newKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `console-${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * One idempotency key per form opening (the form mounts when its modal opens). A lost answer keeps the key,
 * so submitting again is answered with the first result instead of creating a second resource; a definite
 * answer (success, or a refusal the operator now fixes) starts a new key for the next submit.
 */
export function useIdempotencyKey(): { key: string; settle: (result: ActionResult<unknown>) => void } {
  const [key, setKey] = useState(newKey);
  const settle = useCallback((result: ActionResult<unknown>) => {
    if (result.ok || !isOutcomeUnknown(result.error.code)) setKey(newKey());
  }, []);
  return { key, settle };
}

/**
 * Calls a server action; a request that got no answer (network cut, console server gone) becomes an error the
 * form shows instead of an error page, with the form and its idempotency key kept for a safe resubmit.
 */
export async function callAction<T>(action: () => Promise<ActionResult<T>>): Promise<ActionResult<T>> {
  try {
    return await action();
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return {
      ok: false,
      error: {
        code: 'temporarily_unavailable',
        message: 'The console server did not answer. Submit again: it will not be done twice.',
        field: null,
      },
    };
  }
}
