'use client';

import { Group } from '@mantine/core';
import { DeleteEndpointButton } from './delete-endpoint-button';
import { EditEndpointButton } from './edit-endpoint-button';
import { ResumeButton } from './resume-button';
import { RotateSecretButton } from './rotate-secret-button';
import { SendTestButton } from './send-test-button';
import { StatusToggleButton } from './status-toggle-button';
import type { Endpoint } from '../endpoint.types';

export function EndpointActions({ endpoint }: { endpoint: Endpoint }) {
  return (
    <Group gap="xs">
      <SendTestButton endpoint={endpoint} />
      <EditEndpointButton endpoint={endpoint} />
      <StatusToggleButton endpoint={endpoint} />
      <ResumeButton endpoint={endpoint} />
      <RotateSecretButton endpoint={endpoint} />
      <DeleteEndpointButton endpoint={endpoint} />
    </Group>
  );
}
