'use client';

import { Badge, Code, Group, Stack, Text } from '@mantine/core';
import { FieldTable } from '@/components/field-table';
import type { EndpointPreview } from '../endpoint.types';

function Stage({ ok, yes, no }: { ok: boolean; yes: string; no: string }) {
  return (
    <Badge color={ok ? 'green' : 'red'} variant="light" tt="none">
      {ok ? yes : no}
    </Badge>
  );
}

function eventTypeStage(preview: EndpointPreview) {
  if (preview.eventTypeMatched === null)
    return (
      <Text size="sm" c="dimmed">
        not checked (no event type given)
      </Text>
    );
  return <Stage ok={preview.eventTypeMatched} yes="subscribed" no="not subscribed" />;
}

function transformStage(preview: EndpointPreview) {
  if (preview.transformError)
    return (
      <Text size="sm" c="red" data-testid="preview-transform-error">
        failed at {preview.transformError.field}: {preview.transformError.message}
      </Text>
    );
  if (preview.transformApplied) return <Stage ok yes="applied" no="" />;
  return (
    <Text size="sm" c="dimmed">
      none (the payload is delivered as it is)
    </Text>
  );
}

/** Each stage of the preview and the delivered bytes exactly as the API returned them. */
export function PreviewResult({ preview }: { preview: EndpointPreview }) {
  return (
    <Stack gap="sm" data-testid="preview-result">
      <Group gap="xs">
        <Badge size="lg" color={preview.matches ? 'green' : 'red'} data-testid="preview-matches">
          {preview.matches ? 'would be delivered' : 'would not be delivered'}
        </Badge>
        {preview.reason && (
          <Badge size="lg" variant="outline" color="red" tt="none" data-testid="preview-reason">
            {preview.reason}
          </Badge>
        )}
      </Group>
      <FieldTable
        label="Preview stages"
        fields={[
          { label: 'Event type', value: eventTypeStage(preview) },
          { label: 'Filter', value: <Stage ok={preview.filterMatched} yes="matched" no="not matched" /> },
          { label: 'Transform', value: transformStage(preview) },
          { label: 'Content type', value: preview.contentType },
          { label: 'Body bytes', value: preview.bodyBytes ?? '–' },
          { label: 'Delivery units', value: preview.deliveryUnits ?? '–' },
        ]}
      />
      <Text fw={500} size="sm">
        Delivered bytes
      </Text>
      {preview.body === null ? (
        <Text size="sm" c="dimmed">
          nothing would be delivered
        </Text>
      ) : (
        <Code block data-testid="preview-body">
          {preview.body}
        </Code>
      )}
    </Stack>
  );
}
