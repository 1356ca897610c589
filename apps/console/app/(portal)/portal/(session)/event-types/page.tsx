import { Card, Code, Stack, Text, Title } from '@mantine/core';
import { indentJson, isJson } from '@/lib/json-pretty';
import { loadPortalEventTypes } from '../../portal.api';

/** The events this portal offers, each with its description and the example payload the operator wrote. */
export default async function PortalEventTypesPage() {
  const eventTypes = await loadPortalEventTypes();
  return (
    <Stack>
      <Title order={2}>Event catalog</Title>
      {eventTypes.length === 0 ? <Text>No event types are offered yet.</Text> : null}
      {eventTypes.map((eventType) => (
        <Card key={eventType.name} withBorder data-testid="portal-event-type">
          <Title order={4} ff="monospace">
            {eventType.name}
          </Title>
          <Text size="sm" mb="xs">
            {eventType.description || 'No description.'}
          </Text>
          {eventType.example !== null ? (
            <Code block data-testid="portal-event-example">
              {isJson(eventType.example) ? indentJson(eventType.example) : eventType.example}
            </Code>
          ) : (
            <Text size="xs" c="dimmed">
              No example payload.
            </Text>
          )}
        </Card>
      ))}
    </Stack>
  );
}
