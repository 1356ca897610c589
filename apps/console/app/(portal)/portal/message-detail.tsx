'use client';

import { useEffect } from 'react';
import { useRouter } from 'next/navigation';
import { Stack, Text, Title } from '@mantine/core';
import { DeliveriesList } from './deliveries-list';
import type { PortalMessage } from './portal.types';

/** One message with every delivery (replays included) and their attempts; read again every 2 seconds. */
export function MessageDetail({ message, manage }: { message: PortalMessage; manage: boolean }) {
  const router = useRouter();
  useEffect(() => {
    const timer = setInterval(() => router.refresh(), 2_000);
    return () => clearInterval(timer);
  }, [router]);
  return (
    <Stack>
      <Title order={2} ff="monospace">
        {message.id}
      </Title>
      <Text size="sm">
        {message.eventType} · {message.status}
      </Text>
      <DeliveriesList deliveries={message.deliveries?.nodes ?? []} manage={manage} onChanged={() => router.refresh()} />
    </Stack>
  );
}
