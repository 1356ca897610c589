'use client';

import type { ReactNode } from 'react';
import { Modal, Stack, Text } from '@mantine/core';
import { FormActions } from './form-actions';

interface ConfirmModalProps {
  opened: boolean;
  onClose: () => void;
  title: string;
  /** The question, saying what happens and what cannot be undone. */
  children: ReactNode;
  confirmLabel: string;
  pending: boolean;
  onConfirm: () => void;
}

/** A question before something that cannot be undone (deleting): Cancel, or the red button that does it. */
export function ConfirmModal({
  opened,
  onClose,
  title,
  children,
  confirmLabel,
  pending,
  onConfirm,
}: ConfirmModalProps) {
  return (
    <Modal opened={opened} onClose={onClose} title={title}>
      <Stack>
        <Text>{children}</Text>
        <FormActions
          pending={pending}
          onCancel={onClose}
          confirmLabel={confirmLabel}
          color="red"
          onConfirm={onConfirm}
        />
      </Stack>
    </Modal>
  );
}
