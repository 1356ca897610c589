'use client';

import { Group } from '@mantine/core';
import type { EventTypeChoice } from '../../messages/message.types';
import type { Source, VerifierKind } from '../source.types';
import { DeleteSourceButton } from './delete-source-button';
import { EditSourceButton } from './edit-source-button';
import { RotateReceiveUrlButton } from './rotate-receive-url-button';
import { RotateSourceSecretButton } from './rotate-source-secret-button';
import { SourceStatusButton } from './source-status-button';

interface SourceActionsProps {
  source: Source;
  kind: VerifierKind | null;
  eventTypes: EventTypeChoice[];
}

export function SourceActions({ source, kind, eventTypes }: SourceActionsProps) {
  return (
    <Group gap="xs">
      <EditSourceButton source={source} kind={kind} eventTypes={eventTypes} />
      <SourceStatusButton source={source} />
      <RotateSourceSecretButton source={source} generatesSecret={kind?.generatesSecret ?? false} />
      <RotateReceiveUrlButton source={source} />
      <DeleteSourceButton source={source} />
    </Group>
  );
}
