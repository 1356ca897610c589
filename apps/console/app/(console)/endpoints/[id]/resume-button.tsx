'use client';

import { useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { Button } from '@mantine/core';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { resumeEndpointAction } from '../actions';
import type { Endpoint } from '../endpoint.types';

/** Shown for a disabled endpoint or an open circuit: re-checks the URL and sends one probe. */
export function ResumeButton({ endpoint }: { endpoint: Endpoint }) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();
  if (endpoint.status !== 'disabled' && endpoint.health.circuit === 'closed') return null;

  const resume = () =>
    startTransition(async () => {
      const result = await callAction(() => resumeEndpointAction(endpoint.id, endpoint.etag, idempotency.key));
      idempotency.settle(result);
      if (result.ok) notifySuccess(`Endpoint ${endpoint.name} resumed: one probe goes out now.`);
      else notifyApiError(result.error);
      router.refresh();
    });

  return (
    <Button variant="light" color="teal" loading={pending} onClick={resume}>
      Resume
    </Button>
  );
}
