'use client';

import { Button, CopyButton, Group, Text } from '@mantine/core';

/**
 * A resource ID (wdt_..., wde_..., wdy_...) as the API knows it, with a button that copies it: REST calls
 * and support requests need these IDs, and typing them is error-prone.
 */
export function CopyableId({ id, label }: { id: string; label: string }) {
  return (
    <Group gap={4} wrap="nowrap">
      <Text ff="monospace" size="xs" c="dimmed" data-testid="resource-id">
        {id}
      </Text>
      <CopyButton value={id} timeout={2000}>
        {({ copied, copy }) => (
          <Button
            size="compact-xs"
            variant="subtle"
            color={copied ? 'teal' : 'gray'}
            onClick={copy}
            aria-label={`Copy ID of ${label}`}
          >
            {copied ? 'Copied' : 'Copy'}
          </Button>
        )}
      </CopyButton>
    </Group>
  );
}
