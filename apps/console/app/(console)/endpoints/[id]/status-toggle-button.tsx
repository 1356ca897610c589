'use client';

import { useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { Button } from '@mantine/core';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { setEndpointStatusAction } from '../actions';
import type { Endpoint } from '../endpoint.types';

/** Pauses an enabled endpoint (deliveries wait) or enables a paused one. A disabled one needs Resume. */
export function StatusToggleButton({ endpoint }: { endpoint: Endpoint }) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  if (endpoint.status === 'disabled') return null;
  const next = endpoint.status === 'enabled' ? 'paused' : 'enabled';

  const toggle = () =>
    startTransition(async () => {
      const result = await setEndpointStatusAction(endpoint.id, endpoint.etag, next);
      if (result.ok) notifySuccess(`Endpoint ${endpoint.name} ${next}.`);
      else notifyApiError(result.error);
      router.refresh();
    });

  return (
    <Button variant="light" color={next === 'paused' ? 'yellow' : 'green'} loading={pending} onClick={toggle}>
      {next === 'paused' ? 'Pause' : 'Enable'}
    </Button>
  );
}
