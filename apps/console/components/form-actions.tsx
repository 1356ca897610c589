'use client';

import type { ReactNode } from 'react';
import { Button, Group, type MantineColor } from '@mantine/core';

interface FormActionsProps {
  /** While the request runs: the confirm button spins, the cancel button waits. */
  pending: boolean;
  onCancel: () => void;
  /** "Cancel", or what keeping things as they are means ("Keep the message"). */
  cancelLabel?: ReactNode;
  confirmLabel: ReactNode;
  /** red for what cannot be undone, orange for rotations; the theme's colour otherwise. */
  color?: MantineColor;
  /** Without it, the confirm button submits the form it stands in. */
  onConfirm?: () => void;
  /** The confirm button is off until the form can be sent. */
  disabled?: boolean;
}

/** The end of a form or a confirmation: step back on the left, go ahead on the right. */
export function FormActions({
  pending,
  onCancel,
  cancelLabel = 'Cancel',
  confirmLabel,
  color,
  onConfirm,
  disabled,
}: FormActionsProps) {
  return (
    <Group justify="flex-end">
      <Button variant="default" onClick={onCancel} disabled={pending}>
        {cancelLabel}
      </Button>
      <Button
        type={onConfirm ? 'button' : 'submit'}
        color={color}
        onClick={onConfirm}
        loading={pending}
        disabled={disabled}
      >
        {confirmLabel}
      </Button>
    </Group>
  );
}
