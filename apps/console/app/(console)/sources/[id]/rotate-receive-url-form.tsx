'use client';

import { useState, useTransition, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import { Alert, Button, Group, Stack, Text } from '@mantine/core';
import { isFormLevel, type ApiError } from '@/lib/api-error';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { rotateSourceTokenAction } from '../actions';
import type { Source, SourceReveal } from '../source.types';
import { initialOverlap, OverlapInput, readOverlap } from './overlap-input';

interface RotateReceiveUrlFormProps {
  source: Source;
  onRotated: (rotated: SourceReveal) => void;
  onCancel: () => void;
}

/** A new receive URL, shown once; the previous one keeps answering for the overlap. */
export function RotateReceiveUrlForm({ source, onRotated, onCancel }: RotateReceiveUrlFormProps) {
  const router = useRouter();
  const [overlap, setOverlap] = useState<string | number>(() => initialOverlap(source.tokenRotationEndsAt));
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const seconds = readOverlap(overlap);
    if (typeof seconds !== 'number') return setError(seconds);
    startTransition(async () => {
      const result = await callAction(() => rotateSourceTokenAction(source.id, source.etag, seconds, idempotency.key));
      idempotency.settle(result);
      if (!result.ok) {
        setError(result.error);
        if (result.error.code === 'revision_conflict') router.refresh();
        return;
      }
      setError(null);
      onRotated(result.data);
      router.refresh();
    });
  };

  return (
    <form onSubmit={submit} noValidate aria-label="Rotate receive URL">
      <Stack>
        <Text size="sm">
          The source gets a new receive URL, shown once. During the overlap the previous URL answers too, so you can
          give the provider the new one without losing requests. Use it when the URL may have leaked or was lost.
        </Text>
        <OverlapInput
          value={overlap}
          onChange={setOverlap}
          what="the previous URL"
          runningUntil={source.tokenRotationEndsAt}
          error={error}
        />
        {error && isFormLevel(error, ['overlap_seconds']) && (
          <Alert color="red" title="Not rotated">
            {error.message}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onCancel} disabled={pending}>
            Cancel
          </Button>
          <Button type="submit" color="orange" loading={pending}>
            Rotate receive URL
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
