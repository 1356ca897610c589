'use client';

import { useState, useTransition } from 'react';
import { useRouter } from 'next/navigation';
import type { ActionResult, ApiError } from './api-error';
import { callAction, useIdempotencyKey } from './idempotency-key';

/**
 * Runs a server action with the form opening's idempotency key (a lost answer keeps the key for a safe resubmit)
 * and keeps its refusal for the form to show. With `refresh`, the page is read again after a success, and after a
 * revision_conflict so the next try has the resource's new version.
 */
export function useIdempotentSubmit<T>(onDone: (data: T) => void, { refresh = false }: { refresh?: boolean } = {}) {
  const router = useRouter();
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();

  const submit = (action: (idempotencyKey: string) => Promise<ActionResult<T>>) =>
    startTransition(async () => {
      const answer = await callAction(() => action(idempotency.key));
      idempotency.settle(answer);
      if (!answer.ok) {
        setError(answer.error);
        if (refresh && answer.error.code === 'revision_conflict') router.refresh();
        return;
      }
      setError(null);
      onDone(answer.data);
      if (refresh) router.refresh();
    });

  return { error, setError, pending, submit };
}
