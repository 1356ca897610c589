'use client';

import { useState, useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { Button, Group, Modal, NumberInput, Stack } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { ConfirmModal } from '@/components/confirm-modal';
import {
  deleteSubscriptionAction,
  rotateSubscriptionSecretAction,
  sendTestEventAction,
  setSubscriptionEnabledAction,
  updateSubscriptionAction,
} from '../actions';
import { SecretModal } from '../secret-modal';
import { SubscriptionForm, type EnvironmentChoice } from '../subscription-form';
import type { Subscription } from '../subscription.types';

function RotateSecretForm({
  subscription,
  onRotated,
}: {
  subscription: Subscription;
  onRotated: (secret: string | null, endsAt: string | null) => void;
}) {
  const [overlap, setOverlap] = useState<number>(86_400);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();
  const rotate = () =>
    startTransition(async () => {
      const result = await callAction(() =>
        rotateSubscriptionSecretAction(subscription.id, subscription.etag, overlap, idempotency.key),
      );
      idempotency.settle(result);
      if (!result.ok) {
        notifyApiError(result.error);
        return;
      }
      onRotated(result.data.secret, result.data.subscription.secretRotationEndsAt);
    });
  return (
    <Stack>
      <NumberInput
        label="Overlap (seconds)"
        description="How long the current secret keeps signing next to the new one (0 to 86,400)"
        min={0}
        max={86_400}
        value={overlap}
        onChange={(value) => setOverlap(typeof value === 'number' ? value : Number(value) || 0)}
      />
      <Group justify="flex-end">
        <Button onClick={rotate} loading={pending}>
          Rotate secret
        </Button>
      </Group>
    </Stack>
  );
}

/** Enable or disable, edit, rotate the secret, send a test event, delete. */
export function SubscriptionActions({
  subscription,
  environments,
  events,
}: {
  subscription: Subscription;
  environments: EnvironmentChoice[];
  events: string[];
}) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const [editing, edit] = useDisclosure(false);
  const [rotating, rotation] = useDisclosure(false);
  const [deleting, deletion] = useDisclosure(false);
  const [shown, setShown] = useState<{ secret: string | null; endsAt: string | null } | null>(null);

  const run = (
    work: () => Promise<{ ok: boolean; error?: { code: string; message: string; field: string | null } }>,
    done: string,
  ) =>
    startTransition(async () => {
      const result = await work();
      if (result.ok) notifySuccess(done);
      else if (result.error) notifyApiError(result.error);
      router.refresh();
    });

  return (
    <Group>
      <Button
        variant="light"
        color={subscription.enabled ? 'yellow' : 'green'}
        loading={pending}
        onClick={() =>
          run(
            () => setSubscriptionEnabledAction(subscription.id, subscription.etag, !subscription.enabled),
            subscription.enabled ? 'Subscription disabled.' : 'Subscription enabled.',
          )
        }
      >
        {subscription.enabled ? 'Disable' : 'Enable'}
      </Button>
      <Button
        variant="light"
        loading={pending}
        disabled={!subscription.enabled}
        onClick={() => run(() => sendTestEventAction(subscription.id), 'Test event queued.')}
      >
        Send test event
      </Button>
      <Button variant="light" onClick={edit.open}>
        Edit
      </Button>
      <Button variant="light" onClick={rotation.open}>
        Rotate secret
      </Button>
      <Button variant="light" color="red" onClick={deletion.open}>
        Delete
      </Button>
      <Modal opened={editing} onClose={edit.close} title="Edit event subscription" size="lg">
        <SubscriptionForm
          environments={environments}
          events={events}
          subscription={subscription}
          submitLabel="Save"
          onCancel={edit.close}
          submit={async (input) => {
            const result = await updateSubscriptionAction(subscription.id, subscription.etag, input);
            if (result.ok) {
              edit.close();
              notifySuccess('Subscription saved.');
              router.refresh();
            }
            return result;
          }}
        />
      </Modal>
      <Modal opened={rotating} onClose={rotation.close} title="Rotate signing secret">
        <RotateSecretForm
          subscription={subscription}
          onRotated={(secret, endsAt) => {
            rotation.close();
            setShown({ secret, endsAt });
            router.refresh();
          }}
        />
      </Modal>
      <ConfirmModal
        opened={deleting}
        onClose={deletion.close}
        title="Delete event subscription"
        confirmLabel="Delete subscription"
        pending={pending}
        onConfirm={() =>
          startTransition(async () => {
            const result = await deleteSubscriptionAction(subscription.id, subscription.etag);
            if (!result.ok) {
              notifyApiError(result.error);
              deletion.close();
              router.refresh();
              return;
            }
            notifySuccess('Subscription deleted.');
            router.push('/event-subscriptions');
          })
        }
      >
        Delete this subscription? Its pending deliveries are canceled; one already on the wire may still complete.
      </ConfirmModal>
      <SecretModal
        secret={shown?.secret ?? null}
        occasion="rotated"
        previousEndsAt={shown?.endsAt ?? null}
        onClose={() => setShown(null)}
      />
    </Group>
  );
}
