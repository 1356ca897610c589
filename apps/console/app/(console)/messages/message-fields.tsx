'use client';

import Link from 'next/link';
import { Anchor, Code, Text } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { FieldTable } from '@/components/field-table';
import type { Message } from './message.types';

function orNone(value: string | null, none = 'none') {
  return value === null ? (
    <Text size="sm" c="dimmed">
      {none}
    </Text>
  ) : (
    value
  );
}

function yesNo(value: boolean): string {
  return value ? 'yes' : 'no';
}

/** Every field of the message as the API returns it (the body itself is not shown). */
export function MessageFields({ message, tenantName }: { message: Message; tenantName: string | null }) {
  const metadata = Object.entries(message.metadata);
  return (
    <FieldTable
      label="Message fields"
      fields={[
        { label: 'Message ID', value: <Code>{message.id}</Code> },
        {
          label: 'Tenant',
          value: (
            <Anchor component={Link} href={`/tenants/${encodeURIComponent(message.tenantId)}/endpoints`} size="sm">
              {tenantName ? `${tenantName} (${message.tenantId})` : message.tenantId}
            </Anchor>
          ),
        },
        { label: 'Event type', value: message.eventType },
        { label: 'Status', value: message.status },
        { label: 'Origin', value: message.origin },
        { label: 'External ID', value: orNone(message.externalId) },
        {
          label: 'Source',
          value:
            message.sourceId === null ? (
              orNone(null)
            ) : (
              <Anchor component={Link} href={`/sources/${encodeURIComponent(message.sourceId)}`} size="sm">
                {message.sourceId}
              </Anchor>
            ),
        },
        { label: 'Content type', value: message.contentType },
        { label: 'Body size', value: `${message.bodyBytes} bytes` },
        {
          label: 'Body SHA-256',
          value: message.bodySha256 === null ? orNone(null, 'erased with the body') : <Code>{message.bodySha256}</Code>,
        },
        { label: 'Content available', value: yesNo(message.contentAvailable) },
        { label: 'Deliver at', value: formatTimestamp(message.deliverAt) },
        { label: 'Expires at', value: formatTimestamp(message.expiresAt) },
        { label: 'Retained until', value: formatTimestamp(message.retainedUntil) },
        { label: 'Created at', value: formatTimestamp(message.createdAt) },
        {
          label: 'Price',
          value: `${message.price.totalUsd} USD (${message.price.ingestUnits} ingest, ${message.price.deliveryUnits} delivery units; rates ${message.price.rateVersion})`,
        },
        { label: 'Redacted', value: yesNo(message.redacted) },
        { label: 'Redaction status', value: orNone(message.redactionStatus) },
        { label: 'Redacted at', value: orNone(message.redactedAt && formatTimestamp(message.redactedAt)) },
        {
          label: 'Metadata',
          value:
            metadata.length === 0 ? (
              orNone(null)
            ) : (
              <Code block>{metadata.map(([key, value]) => `${key}: ${value}`).join('\n')}</Code>
            ),
        },
      ]}
    />
  );
}
