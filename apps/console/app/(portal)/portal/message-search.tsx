'use client';

import Link from 'next/link';
import { Button, Group, NativeSelect, TextInput } from '@mantine/core';
import type { PortalMessageSearchField } from './portal.types';

const FIELDS: { value: PortalMessageSearchField; label: string }[] = [
  { value: 'id', label: 'Message ID' },
  { value: 'externalId', label: 'External ID' },
  { value: 'eventType', label: 'Event type' },
];

/** A plain GET form: the search lives in the URL, so it survives paging and reloads and works before hydration. */
export function MessageSearch({ by, value }: { by: PortalMessageSearchField; value: string }) {
  return (
    <form method="get" action="/portal/messages" aria-label="Search messages">
      <Group align="flex-end" gap="xs">
        <NativeSelect name="by" label="Search by" data={FIELDS} defaultValue={by} w={160} />
        <TextInput
          name="q"
          label="Value"
          placeholder={by === 'id' ? 'wdm_...' : by === 'externalId' ? 'Your ID of the event' : 'order.created'}
          defaultValue={value}
          w={320}
        />
        <Button type="submit" variant="light">
          Search
        </Button>
        {value && (
          <Button component={Link} href="/portal/messages" variant="subtle">
            Clear
          </Button>
        )}
      </Group>
    </form>
  );
}
