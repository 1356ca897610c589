'use client';

import { useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { Button } from '@mantine/core';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { setArchivedAction } from './actions';
import type { EventType } from './event-type.types';

/** Archived types stay in the catalog but accept no new messages; unarchiving brings them back. */
export function ArchiveButton({ eventType }: { eventType: EventType }) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const archive = !eventType.archived;

  const toggle = () =>
    startTransition(async () => {
      const result = await setArchivedAction(eventType.id, eventType.etag, archive);
      if (result.ok) notifySuccess(`Event type ${eventType.name} ${archive ? 'archived' : 'unarchived'}.`);
      else notifyApiError(result.error);
      router.refresh();
    });

  return (
    <Button
      size="xs"
      variant="light"
      color={archive ? 'orange' : 'teal'}
      loading={pending}
      onClick={toggle}
      aria-label={`${archive ? 'Archive' : 'Unarchive'} ${eventType.name}`}
    >
      {archive ? 'Archive' : 'Unarchive'}
    </Button>
  );
}
