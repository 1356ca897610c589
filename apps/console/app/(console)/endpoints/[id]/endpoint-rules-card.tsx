'use client';

import { Code, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import type { Endpoint } from '../endpoint.types';

function Rule({ label, text, none }: { label: string; text: string | null; none: string }) {
  return (
    <Stack gap={4}>
      <Text fw={500} size="sm">
        {label}
      </Text>
      {text === null ? (
        <Text size="sm" c="dimmed">
          {none}
        </Text>
      ) : (
        <Code block data-testid={`endpoint-${label.toLowerCase()}`}>
          {text}
        </Code>
      )}
    </Stack>
  );
}

/** The filter and transform exactly as written. */
export function EndpointRulesCard({ endpoint }: { endpoint: Endpoint }) {
  return (
    <Stack gap="xs">
      <Title order={2} size="h3">
        Filter and transform
      </Title>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Rule label="Filter" text={endpoint.filter} none="none: every subscribed event is delivered" />
        <Rule label="Transform" text={endpoint.transform} none="none: the payload is delivered as it is" />
      </SimpleGrid>
    </Stack>
  );
}
