'use client';

import { useState, type FormEvent } from 'react';
import { PasswordInput, Stack, Text } from '@mantine/core';
import { fieldMessage } from '@/lib/api-error';
import { useIdempotentSubmit } from '@/lib/use-idempotent-submit';
import { FormActions } from '@/components/form-actions';
import { FormRefusal } from '@/components/form-refusal';
import { rotateSourceSecretAction } from '../actions';
import type { Source, SourceReveal } from '../source.types';
import { initialOverlap, OverlapInput, readOverlap } from './overlap-input';

interface RotateSourceSecretFormProps {
  source: Source;
  /** True when the service makes the secret (when none is given); false when the provider issues it. */
  generatesSecret: boolean;
  onRotated: (rotated: SourceReveal) => void;
  onCancel: () => void;
}

/** A new secret (the provider's, or a generated one shown once); the previous one keeps verifying for the overlap. */
export function RotateSourceSecretForm({ source, generatesSecret, onRotated, onCancel }: RotateSourceSecretFormProps) {
  const [secret, setSecret] = useState('');
  const [overlap, setOverlap] = useState<string | number>(() => initialOverlap(source.secretRotationEndsAt));
  const { error, setError, pending, submit: rotate } = useIdempotentSubmit(onRotated, { refresh: true });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const seconds = readOverlap(overlap);
    if (typeof seconds !== 'number') return setError(seconds);
    if (!generatesSecret && secret === '')
      return setError({ code: 'invalid_field', message: "Enter the provider's new secret.", field: 'secret' });
    rotate((key) =>
      rotateSourceSecretAction(
        source.id,
        source.etag,
        { secret: secret === '' ? null : secret, overlapSeconds: seconds },
        key,
      ),
    );
  };

  return (
    <form onSubmit={submit} noValidate aria-label="Rotate secret">
      <Stack>
        <Text size="sm">
          {generatesSecret
            ? 'Requests are verified with a new secret from now on: the one you enter, or a generated one shown once. '
            : 'Enter the new secret the provider issued. '}
          During the overlap the previous secret verifies too, so the sender can switch without rejected requests.
        </Text>
        <PasswordInput
          label={generatesSecret ? 'New secret (optional)' : 'New secret'}
          description={
            generatesSecret
              ? 'Leave it empty and a secret is generated and shown once. Write-only.'
              : 'Exactly as the provider issued it. Write-only: it cannot be read back.'
          }
          value={secret}
          onChange={(event) => setSecret(event.currentTarget.value)}
          error={fieldMessage(error, 'secret')}
          required={!generatesSecret}
          autoComplete="off"
        />
        <OverlapInput
          value={overlap}
          onChange={setOverlap}
          what="the previous secret"
          runningUntil={source.secretRotationEndsAt}
          error={error}
        />
        <FormRefusal error={error} title="Not rotated" fields={['secret', 'overlap_seconds']} />
        <FormActions pending={pending} onCancel={onCancel} confirmLabel="Rotate secret" color="orange" />
      </Stack>
    </form>
  );
}
