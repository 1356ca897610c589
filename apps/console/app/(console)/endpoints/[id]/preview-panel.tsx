'use client';

import { useState, useTransition, type FormEvent } from 'react';
import { Button, Group, Paper, Stack, Text, TextInput, Title } from '@mantine/core';
import { fieldMessage, isFormLevel, type ApiError } from '@/lib/api-error';
import { notifyApiError } from '@/lib/notify';
import { JsonEditor, jsonProblem } from '@/components/json-editor';
import { previewEndpointAction } from '../actions';
import type { EndpointPreview } from '../endpoint.types';
import { PreviewResult } from './preview-result';
import type { PreviewSample } from './preview-sample';

const FIELDS = ['payload', 'event_type'] as const;

/** Runs a sample payload through the endpoint's event patterns, filter and transform; nothing is sent. */
interface PreviewPanelProps {
  endpointId: string;
  /** The endpoint's version: a result for an earlier version is dropped, the typed payload is kept. */
  version: string;
  sample: PreviewSample;
}

export function PreviewPanel({ endpointId, version, sample }: PreviewPanelProps) {
  const [payload, setPayload] = useState(sample.payload);
  const [eventType, setEventType] = useState('');
  const [preview, setPreview] = useState<EndpointPreview | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const [previewedVersion, setPreviewedVersion] = useState(version);
  if (previewedVersion !== version) {
    setPreviewedVersion(version);
    setPreview(null);
  }
  const blocked = payload.trim() === '' || jsonProblem(payload) !== null;

  const run = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (blocked) return;
    startTransition(async () => {
      const result = await previewEndpointAction(endpointId, payload, eventType);
      if (!result.ok) {
        setError(result.error);
        setPreview(null);
        if (isFormLevel(result.error, FIELDS)) notifyApiError(result.error);
        return;
      }
      setError(null);
      setPreview(result.data);
    });
  };

  return (
    <Paper withBorder p="lg">
      <Stack>
        <div>
          <Title order={2} size="h3">
            Preview
          </Title>
          <Text size="sm" c="dimmed">
            What this endpoint would deliver for a payload, with its current filter and transform. Nothing is sent or
            charged.
          </Text>
        </div>
        <form onSubmit={run} noValidate>
          <Stack>
            <JsonEditor
              label="Sample payload"
              description={
                sample.exampleOf
                  ? `Starts from the example of ${sample.exampleOf}; the text is sent exactly as typed.`
                  : 'JSON, sent exactly as typed.'
              }
              value={payload}
              onChange={setPayload}
              serverError={fieldMessage(error, 'payload')}
            />
            <TextInput
              label="Event type"
              description="Optional: also check that the endpoint subscribes to it"
              placeholder="invoice.paid"
              value={eventType}
              onChange={(event) => setEventType(event.currentTarget.value)}
              error={fieldMessage(error, 'event_type')}
              maw={420}
            />
            <Group>
              <Button type="submit" loading={pending} disabled={blocked}>
                Run preview
              </Button>
            </Group>
          </Stack>
        </form>
        {preview && <PreviewResult preview={preview} />}
      </Stack>
    </Paper>
  );
}
