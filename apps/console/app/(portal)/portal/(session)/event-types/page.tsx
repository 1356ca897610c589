import { Card, Code, Stack, Text, Title } from '@mantine/core';
import { indentJson, isJson } from '@/lib/json-pretty';
import { searchParam } from '@/lib/list-href';
import { PagedList } from '../../paged-list';
import { loadPortalEventTypes } from '../../portal.api';

const PATH = '/portal/event-types';

/**
 * The events this portal offers, each with its description and the example payload the operator wrote: 20 a page
 * by name (examples may be 16 KiB each, and a catalog 1,000 types long).
 */
export default async function PortalEventTypesPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const after = searchParam((await searchParams)['after']) || null;
  const eventTypes = await loadPortalEventTypes(after);
  return (
    <Stack>
      <Title order={2}>Event catalog</Title>
      <PagedList page={eventTypes} path={PATH} after={after}>
        {(nodes) => (
          <Stack>
            {nodes.length === 0 ? <Text>No event types are offered yet.</Text> : null}
            {nodes.map((eventType) => (
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
        )}
      </PagedList>
    </Stack>
  );
}
