'use client';

import { useEffect, useRef, useState } from 'react';
import type { ApiError } from '@/lib/api-error';
import { getMessageAction } from './actions';
import { isTerminal, type Message } from './message.types';

/** Quick refreshes while a delivery is likely to settle soon, slower ones for a long wait (retries, scheduling). */
const FAST_MS = 1_000;
const SLOW_MS = 5_000;
const FAST_FOR_MS = 60_000;

/**
 * The message kept fresh: read again until its status is terminal, then left alone. A failed read keeps the last
 * message on screen, says why, and tries again at the slow pace.
 */
export function useLiveMessage(initial: Message): { message: Message; refreshing: boolean; error: ApiError | null } {
  const [message, setMessage] = useState(initial);
  const [error, setError] = useState<ApiError | null>(null);
  const [tracked, setTracked] = useState(initial.id);
  if (tracked !== initial.id) {
    setTracked(initial.id);
    setMessage(initial);
    setError(null);
  }
  const startedAt = useRef(Date.now());
  const done = isTerminal(message.status);

  useEffect(() => {
    if (done) return;
    let stopped = false;
    const wait = error || Date.now() - startedAt.current > FAST_FOR_MS ? SLOW_MS : FAST_MS;
    const refresh = async () => {
      let result: Awaited<ReturnType<typeof getMessageAction>>;
      try {
        result = await getMessageAction(message.id);
      } catch {
        result = {
          ok: false,
          error: { code: 'temporarily_unavailable', message: 'The console server did not answer.', field: null },
        };
      }
      if (stopped) return;
      if (result.ok) {
        setMessage(result.data);
        setError(null);
      } else {
        setError(result.error);
      }
    };
    const timer = setTimeout(() => void refresh(), wait);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [done, error, message]);

  return { message, refreshing: !done, error };
}
