'use client';

import { useState } from 'react';
import { Alert, Button, MultiSelect, SegmentedControl, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { KeyValueEditor } from '@/components/key-value-editor';
import { fieldMessage, type ApiError } from '@/lib/api-error';
import { newRow, toRecord, type KeyValueRow } from '@/lib/key-value-rows';
import type { PortalEndpointFields } from './actions';

export interface EndpointFormValues {
  url: string;
  name: string;
  events: string[];
  filter: string;
  /** Names of the headers already set (their values are write-only: a change sends them all again). */
  headerNames: string[];
}

interface EndpointFormProps {
  initial: EndpointFormValues;
  eventTypes: string[];
  /** Create also picks the delivery mode and the signature scheme; edit cannot change them (rotating can the scheme). */
  withScheme: boolean;
  /** A stream endpoint has no URL to edit (its receiver connects). */
  stream?: boolean;
  submitLabel: string;
  onSubmit(
    fields: PortalEndpointFields,
    scheme: 'hmac' | 'ed25519',
    deliveryMode: 'push' | 'stream',
  ): Promise<ApiError | null>;
}

/** URL, event types, filter and headers: what a receiver decides about its endpoint. */
export function EndpointForm({ initial, eventTypes, withScheme, stream, submitLabel, onSubmit }: EndpointFormProps) {
  const [url, setUrl] = useState(initial.url);
  const [name, setName] = useState(initial.name);
  const [events, setEvents] = useState(initial.events);
  const [filter, setFilter] = useState(initial.filter);
  const [headers, setHeaders] = useState<KeyValueRow[]>([newRow()]);
  // Header values cannot be read back: an edit sends headers only when the rows were touched (they replace all).
  const [headersTouched, setHeadersTouched] = useState(false);
  const [scheme, setScheme] = useState<'hmac' | 'ed25519'>('hmac');
  const [mode, setMode] = useState<'push' | 'stream'>(stream ? 'stream' : 'push');
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    const record = toRecord(headers);
    if (!record.ok) {
      setError({ code: 'invalid_field', message: record.message, field: 'headers' });
      return;
    }
    setBusy(true);
    const fields: PortalEndpointFields = {
      ...(mode === 'stream' ? {} : { url }),
      name: name || 'Webhook',
      events,
      filter: filter.trim() === '' ? null : filter,
      ...(headersTouched || initial.headerNames.length === 0 ? { headers: record.record } : {}),
    };
    setError(await onSubmit(fields, scheme, mode));
    setBusy(false);
  };
  return (
    <Stack gap="sm">
      {withScheme ? (
        <SegmentedControl
          aria-label="Delivery"
          value={mode}
          onChange={(value) => setMode(value === 'stream' ? 'stream' : 'push')}
          data={[
            // Labels without "URL": the form's URL field is found by that label.
            { value: 'push', label: 'Push (we call you)' },
            { value: 'stream', label: 'Stream (your receiver connects)' },
          ]}
        />
      ) : null}
      {mode === 'push' ? (
        <TextInput
          label="URL"
          required
          value={url}
          onChange={(e) => setUrl(e.currentTarget.value)}
          error={fieldMessage(error, 'url')}
        />
      ) : null}
      <TextInput
        label="Name"
        value={name}
        onChange={(e) => setName(e.currentTarget.value)}
        error={fieldMessage(error, 'name')}
      />
      <MultiSelect
        label="Event types"
        description="The events this endpoint receives"
        data={eventTypes}
        value={events}
        onChange={setEvents}
        searchable
        error={fieldMessage(error, 'events')}
      />
      <Textarea
        label="Filter"
        description='Optional: a JSON filter on the payload, e.g. {"field":"/amount","op":"gt","value":100}'
        autosize
        minRows={2}
        value={filter}
        onChange={(e) => setFilter(e.currentTarget.value)}
        error={fieldMessage(error, 'filter')}
      />
      {initial.headerNames.length > 0 ? (
        <Text size="sm" c="dimmed">
          Headers set now: {initial.headerNames.join(', ')}. They stay as they are unless you change the rows below,
          which then replace them all.
        </Text>
      ) : null}
      <KeyValueEditor
        label="Headers"
        description="Sent with every delivery; values cannot be read back"
        noun="header"
        rows={headers}
        onChange={(rows) => {
          setHeaders(rows);
          setHeadersTouched(true);
        }}
        maskValues
        error={fieldMessage(error, 'headers')}
      />
      {withScheme ? (
        <SegmentedControl
          value={scheme}
          onChange={(value) => setScheme(value === 'ed25519' ? 'ed25519' : 'hmac')}
          data={[
            { value: 'hmac', label: 'HMAC (shared secret)' },
            { value: 'ed25519', label: 'ed25519 (public key)' },
          ]}
        />
      ) : null}
      {error && !error.field ? (
        <Alert color="red" data-testid="portal-form-error">
          {error.message}
        </Alert>
      ) : null}
      <Button onClick={() => void submit()} loading={busy}>
        {submitLabel}
      </Button>
    </Stack>
  );
}
