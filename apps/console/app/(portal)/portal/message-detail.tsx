'use client';

import { useEffect } from 'react';
import { useRouter } from 'next/navigation';
import { Code, Stack, Text, Title } from '@mantine/core';
import type { ActionResult } from '@/lib/api-error';
import { formatTimestamp } from '@/lib/format';
import { DeliveriesList } from './deliveries-list';
import type { PortalMessage, PortalMessageContent } from './portal.types';

/** The payload as accepted, or why it is no longer there. */
function Payload({ content }: { content: ActionResult<PortalMessageContent> }) {
  if (!content.ok)
    return (
      <Text size="sm" c="dimmed" data-testid="portal-payload-missing">
        {content.error.code === 'payload_expired'
          ? 'The payload is no longer kept (redacted, or past its retention).'
          : `The payload could not be read (${content.error.code}).`}
      </Text>
    );
  return (
    <Stack gap={4}>
      <Text size="xs" c="dimmed">
        {content.data.contentType}, {content.data.bytes} bytes
      </Text>
      <Code block data-testid="portal-payload" style={{ maxHeight: 320, overflow: 'auto' }}>
        {content.data.text ?? 'The payload is not UTF-8 text.'}
      </Code>
    </Stack>
  );
}

/** One message with its payload and every delivery (replays included) and their attempts; read again every 2 s. */
export function MessageDetail({
  message,
  content,
  manage,
}: {
  message: PortalMessage;
  content: ActionResult<PortalMessageContent>;
  manage: boolean;
}) {
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
        {message.eventType} · {message.status} · {formatTimestamp(message.createdAt)}
        {message.externalId ? ` · external ID ${message.externalId}` : ''}
      </Text>
      <Title order={3} size="h4">
        Payload
      </Title>
      <Payload content={content} />
      <Title order={3} size="h4">
        Deliveries
      </Title>
      <DeliveriesList deliveries={message.deliveries?.nodes ?? []} manage={manage} onChanged={() => router.refresh()} />
    </Stack>
  );
}
