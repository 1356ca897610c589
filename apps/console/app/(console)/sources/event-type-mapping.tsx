'use client';

import { Code, Text } from '@mantine/core';
import type { Source } from './source.types';

/** How captures get their event type: the fixed type, or "from /path" with its prefix. */
export function EventTypeMapping({
  source,
}: {
  source: Pick<Source, 'eventType' | 'eventTypePath' | 'eventTypePrefix'>;
}) {
  if (source.eventType !== null)
    return (
      <Text size="sm" ff="monospace" data-testid="event-type-mapping">
        {source.eventType}
      </Text>
    );
  return (
    <Text size="sm" data-testid="event-type-mapping">
      from <Code>{source.eventTypePath}</Code>
      {source.eventTypePrefix ? (
        <>
          {' '}
          prefixed <Code>{source.eventTypePrefix}</Code>
        </>
      ) : null}
    </Text>
  );
}
