'use client';

import { useState, type FormEvent } from 'react';
import { Stack, Text } from '@mantine/core';
import { useIdempotentSubmit } from '@/lib/use-idempotent-submit';
import { FormActions } from '@/components/form-actions';
import { FormRefusal } from '@/components/form-refusal';
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
  const [overlap, setOverlap] = useState<string | number>(() => initialOverlap(source.tokenRotationEndsAt));
  const { error, setError, pending, submit: rotate } = useIdempotentSubmit(onRotated, { refresh: true });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const seconds = readOverlap(overlap);
    if (typeof seconds !== 'number') return setError(seconds);
    rotate((key) => rotateSourceTokenAction(source.id, source.etag, seconds, key));
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
        <FormRefusal error={error} title="Not rotated" fields={['overlap_seconds']} />
        <FormActions pending={pending} onCancel={onCancel} confirmLabel="Rotate receive URL" color="orange" />
      </Stack>
    </form>
  );
}
