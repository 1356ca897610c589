'use client';

import { useState } from 'react';
import { useRouter } from 'next/navigation';
import { Button, Card, Stack, Title } from '@mantine/core';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { createPortalEndpoint } from './actions';
import { EndpointForm } from './endpoint-form';
import { SecretOnce } from './secret-once';

/** Adds an endpoint; the new secret is shown once, then the endpoint's page opens from the list. */
export function NewEndpoint({ eventTypes }: { eventTypes: string[] }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  // One key per opening of the form: a submit whose answer is lost is answered with the first result, not made twice.
  const { key, settle } = useIdempotencyKey();
  if (!open)
    return (
      <Stack gap="sm">
        {secret ? <SecretOnce secret={secret} /> : null}
        <Button onClick={() => setOpen(true)} w="fit-content">
          Add endpoint
        </Button>
      </Stack>
    );
  return (
    <Card withBorder>
      <Title order={3} mb="sm">
        New endpoint
      </Title>
      <EndpointForm
        initial={{ url: '', name: '', events: eventTypes, filter: '', headerNames: [] }}
        eventTypes={eventTypes}
        withScheme
        submitLabel="Create endpoint"
        onSubmit={async (fields, scheme, deliveryMode) => {
          const result = await callAction(() => createPortalEndpoint(fields, scheme, key, deliveryMode));
          settle(result);
          if (!result.ok) return result.error;
          setSecret(result.data.signingSecret);
          setOpen(false);
          router.refresh();
          return null;
        }}
      />
    </Card>
  );
}
