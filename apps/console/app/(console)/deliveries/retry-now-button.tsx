'use client';

import { useTransition } from 'react';
import { Button } from '@mantine/core';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { retryDeliveryNowAction } from './actions';
import type { Delivery } from './delivery.types';

/**
 * For a delivery waiting for its next retry: makes it due now. Free, and it spends one of the delivery's remaining
 * attempts, so no confirmation.
 */
export function RetryNowButton({ delivery, onDone }: { delivery: Delivery; onDone: () => void }) {
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();

  const retry = () =>
    startTransition(async () => {
      const result = await callAction(() => retryDeliveryNowAction(delivery.id, idempotency.key));
      idempotency.settle(result);
      if (result.ok) notifySuccess(`Attempt ${delivery.attemptCount + 1} of ${delivery.id} goes out now (free).`);
      else notifyApiError(result.error);
      onDone();
    });

  return (
    <Button size="xs" variant="light" color="teal" loading={pending} onClick={retry}>
      Retry now
    </Button>
  );
}
