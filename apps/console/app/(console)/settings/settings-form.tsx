'use client';

import { useState, useTransition, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import { Button, Group, NumberInput, Paper, Stack, Switch, Textarea } from '@mantine/core';
import { fieldMessage, isFormLevel, type ApiError } from '@/lib/api-error';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { updateSettingsAction } from './actions';
import type { Settings } from './settings.types';

const FIELDS = [
  'payload_retention_days',
  'response_body_logging',
  'response_retention_days',
  'portal_frame_origins',
] as const;

/** The ranges the API accepts, checked here too so a typo is caught before the request. */
const RANGES = {
  payload_retention_days: { min: 1, max: 30 },
  response_retention_days: { min: 1, max: 7 },
} as const;

/** A whole number of days in the field's range, or the error to show next to the field. */
function days(value: string | number, field: keyof typeof RANGES): number | ApiError {
  const { min, max } = RANGES[field];
  const number = typeof value === 'number' ? value : Number(value);
  if (value === '' || !Number.isInteger(number) || number < min || number > max)
    return { code: 'invalid_field', message: `Enter a whole number of days from ${min} to ${max}.`, field };
  return number;
}

export function SettingsForm({ settings }: { settings: Settings }) {
  const router = useRouter();
  const [payloadDays, setPayloadDays] = useState<string | number>(settings.payloadRetentionDays);
  const [logging, setLogging] = useState(settings.responseBodyLogging);
  const [responseDays, setResponseDays] = useState<string | number>(settings.responseRetentionDays);
  const [frameOrigins, setFrameOrigins] = useState(settings.portalFrameOrigins.join('\n'));
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const payloadRetentionDays = days(payloadDays, 'payload_retention_days');
    if (typeof payloadRetentionDays !== 'number') return setError(payloadRetentionDays);
    const responseRetentionDays = days(responseDays, 'response_retention_days');
    if (typeof responseRetentionDays !== 'number') return setError(responseRetentionDays);
    startTransition(async () => {
      const result = await updateSettingsAction(settings.etag, {
        payloadRetentionDays,
        responseBodyLogging: logging,
        responseRetentionDays,
        portalFrameOrigins: frameOrigins
          .split(/\s+/)
          .map((origin) => origin.trim())
          .filter((origin) => origin !== ''),
      });
      if (!result.ok) {
        setError(result.error);
        if (isFormLevel(result.error, FIELDS)) notifyApiError(result.error);
        if (result.error.code === 'revision_conflict') router.refresh();
        return;
      }
      setError(null);
      notifySuccess(`Settings saved. Configuration version ${result.data.configurationVersion}.`);
      router.refresh();
    });
  };

  return (
    <Paper withBorder p="lg" maw={560}>
      <form onSubmit={submit} noValidate>
        <Stack>
          <NumberInput
            label="Payload retention (days)"
            description="How long message payloads are kept: 1 to 30 days"
            value={payloadDays}
            onChange={setPayloadDays}
            min={RANGES.payload_retention_days.min}
            max={RANGES.payload_retention_days.max}
            clampBehavior="none"
            allowDecimal={false}
            allowNegative={false}
            error={fieldMessage(error, 'payload_retention_days')}
          />
          <Switch
            label="Response body logging"
            description="Keep the first 4 KiB of each receiver response"
            checked={logging}
            onChange={(event) => setLogging(event.currentTarget.checked)}
            error={fieldMessage(error, 'response_body_logging')}
          />
          <NumberInput
            label="Response retention (days)"
            description="How long logged response bodies are kept: 1 to 7 days"
            value={responseDays}
            onChange={setResponseDays}
            min={RANGES.response_retention_days.min}
            max={RANGES.response_retention_days.max}
            clampBehavior="none"
            allowDecimal={false}
            allowNegative={false}
            error={fieldMessage(error, 'response_retention_days')}
          />
          <Textarea
            label="Origins allowed to frame the receivers' portal"
            description="One per line, like https://app.example.com; none: the portal opens only as a page of its own"
            autosize
            minRows={2}
            value={frameOrigins}
            onChange={(event) => setFrameOrigins(event.currentTarget.value)}
            error={fieldMessage(error, 'portal_frame_origins')}
          />
          <Group justify="flex-end">
            <Button type="submit" loading={pending}>
              Save settings
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}
