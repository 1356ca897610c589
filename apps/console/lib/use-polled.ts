'use client';

import { useCallback, useEffect, useRef, useState } from 'react';
import type { ActionResult, ApiError } from './api-error';

/** Quick refreshes while the work is likely to finish soon, slower ones for a long wait (retries, scheduling). */
const FAST_MS = 1_000;
const SLOW_MS = 5_000;
const FAST_FOR_MS = 60_000;

export interface Polled<T> {
  value: T;
  refreshing: boolean;
  error: ApiError | null;
  /** Reads again at once and follows at the quick pace again (after a cancel, a replay, a retry now). */
  refreshNow: () => void;
}

/**
 * A value kept fresh: read again until `settled` says nothing will change, then left alone until `refreshNow`.
 * A failed read keeps the last value on screen, says why, and tries again at the slow pace.
 */
export function usePolled<T>(
  key: string,
  initial: T,
  load: () => Promise<ActionResult<T>>,
  settled: (value: T) => boolean,
): Polled<T> {
  const [value, setValue] = useState(initial);
  const [error, setError] = useState<ApiError | null>(null);
  const [forced, setForced] = useState(false);
  const [tracked, setTracked] = useState(key);
  if (tracked !== key) {
    setTracked(key);
    setValue(initial);
    setError(null);
  }
  const startedAt = useRef(Date.now());
  const loadRef = useRef(load);
  useEffect(() => {
    loadRef.current = load;
  });
  const done = settled(value);

  useEffect(() => {
    if (done && !forced) return;
    let stopped = false;
    const wait = forced ? 0 : error || Date.now() - startedAt.current > FAST_FOR_MS ? SLOW_MS : FAST_MS;
    const refresh = async () => {
      let result: ActionResult<T>;
      try {
        result = await loadRef.current();
      } catch {
        result = {
          ok: false,
          error: { code: 'temporarily_unavailable', message: 'The console server did not answer.', field: null },
        };
      }
      if (stopped) return;
      setForced(false);
      if (result.ok) {
        setValue(result.data);
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
  }, [done, error, value, forced]);

  const refreshNow = useCallback(() => {
    startedAt.current = Date.now();
    setForced(true);
  }, []);

  return { value, refreshing: !done, error, refreshNow };
}
