'use client';

import { useCallback, useEffect, useRef, useState } from 'react';
import type { ActionResult, ApiError } from '@/lib/api-error';
import { isPendingDelivery } from '../deliveries/delivery.types';
import { getMessageAction, getMessageInspectionAction } from './actions';
import { isTerminal, type Message, type MessageInspection } from './message.types';

/** Quick refreshes while a delivery is likely to settle soon, slower ones for a long wait (retries, scheduling). */
const FAST_MS = 1_000;
const SLOW_MS = 5_000;
const FAST_FOR_MS = 60_000;

interface Polled<T> {
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
function usePolled<T>(
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

/** The message kept fresh until its status is terminal (the endpoint's test message result). */
export function useLiveMessage(initial: Message): { message: Message; refreshing: boolean; error: ApiError | null } {
  const { value, refreshing, error } = usePolled(
    initial.id,
    initial,
    () => getMessageAction(initial.id),
    (message) => isTerminal(message.status),
  );
  return { message: value, refreshing, error };
}

/** Nothing left to change: the message's status is terminal and no delivery of any generation is pending. */
export function isSettled(inspection: MessageInspection): boolean {
  return (
    isTerminal(inspection.message.status) &&
    inspection.deliveries.every((delivery) => !isPendingDelivery(delivery.status))
  );
}

/**
 * The message with its deliveries and attempts kept fresh while anything is pending or in flight, replays
 * included (they never change the message's status); it stops once every delivery has finished.
 */
export function useLiveMessageInspection(initial: MessageInspection): Polled<MessageInspection> {
  const id = initial.message.id;
  return usePolled(id, initial, () => getMessageInspectionAction(id), isSettled);
}
