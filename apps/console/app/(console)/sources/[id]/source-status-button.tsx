'use client';

import { useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { Button } from '@mantine/core';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { setSourceStatusAction } from '../actions';
import type { Source } from '../source.types';

/** Pauses an active source (its URL answers 503 so providers send again later) or resumes a paused one. */
export function SourceStatusButton({ source }: { source: Source }) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const next = source.status === 'active' ? 'paused' : 'active';

  const toggle = () =>
    startTransition(async () => {
      const result = await setSourceStatusAction(source.id, source.etag, next);
      if (result.ok)
        notifySuccess(
          next === 'paused'
            ? `Source ${source.name} paused: its URL answers 503 and providers send again later.`
            : `Source ${source.name} resumed: it captures again.`,
        );
      else notifyApiError(result.error);
      router.refresh();
    });

  return (
    <Button variant="light" color={next === 'paused' ? 'yellow' : 'green'} loading={pending} onClick={toggle}>
      {next === 'paused' ? 'Pause' : 'Resume'}
    </Button>
  );
}
