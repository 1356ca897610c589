'use client';

import { useState, type FormEvent } from 'react';
import { NumberInput, Stack, Text } from '@mantine/core';
import { fieldMessage } from '@/lib/api-error';
import { useIdempotentSubmit } from '@/lib/use-idempotent-submit';
import { FormActions } from '@/components/form-actions';
import { FormRefusal } from '@/components/form-refusal';
import { rotateEndpointSecretAction } from '../actions';
import { MAX_SECRET_OVERLAP_SECONDS, type Endpoint, type SignatureScheme } from '../endpoint.types';
import { SignatureSchemeControl } from '../signature-scheme-control';

interface RotateSecretFormProps {
  endpoint: Endpoint;
  /** The new secret to show once; null when the new key is ed25519 (its public key is on the endpoint's page). */
  onRotated: (signingSecret: string | null) => void;
  onCancel: () => void;
}

/** Asks how long the old secret keeps signing, then rotates; a refusal (such as invalid_state) is shown here. */
export function RotateSecretForm({ endpoint, onRotated, onCancel }: RotateSecretFormProps) {
  const [overlap, setOverlap] = useState<string | number>(MAX_SECRET_OVERLAP_SECONDS);
  const [scheme, setScheme] = useState<SignatureScheme>(endpoint.signatureScheme);
  const {
    error,
    setError,
    pending,
    submit: rotate,
  } = useIdempotentSubmit((rotated: { signingSecret: string | null }) => onRotated(rotated.signingSecret), {
    refresh: true,
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const seconds = typeof overlap === 'number' ? overlap : Number(overlap);
    if (overlap === '' || !Number.isInteger(seconds) || seconds < 0 || seconds > MAX_SECRET_OVERLAP_SECONDS) {
      setError({
        code: 'invalid_field',
        message: `Enter a whole number of seconds from 0 to ${MAX_SECRET_OVERLAP_SECONDS}.`,
        field: 'overlap_seconds',
      });
      return;
    }
    rotate((key) => rotateEndpointSecretAction(endpoint.id, endpoint.etag, seconds, scheme, key));
  };

  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        <Text size="sm">
          Deliveries are signed with a new secret from now on. During the overlap they carry a signature with the old
          secret too, so receivers can switch without failures.
        </Text>
        <SignatureSchemeControl
          value={scheme}
          onChange={setScheme}
          error={fieldMessage(error, 'signature_scheme')}
          description="The new key's scheme: switching sends both kinds of signature during the overlap"
        />
        <NumberInput
          label="Overlap (seconds)"
          description={`How long the old secret keeps signing: 0 to ${MAX_SECRET_OVERLAP_SECONDS} (0 retires it now)`}
          value={overlap}
          onChange={setOverlap}
          min={0}
          max={MAX_SECRET_OVERLAP_SECONDS}
          clampBehavior="none"
          allowDecimal={false}
          allowNegative={false}
          error={fieldMessage(error, 'overlap_seconds')}
          data-autofocus
        />
        <FormRefusal error={error} title="Not rotated" fields={['overlap_seconds', 'signature_scheme']} />
        <FormActions pending={pending} onCancel={onCancel} confirmLabel="Rotate secret" color="orange" />
      </Stack>
    </form>
  );
}
