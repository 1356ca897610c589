'use client';

import { Alert, Stack, Text } from '@mantine/core';
import { ShownOnceValue } from '@/components/shown-once-value';

/** A new signing secret, shown this once: the portal cannot show it again except through the recorded reveal. */
export function SecretOnce({ secret }: { secret: string }) {
  return (
    <Alert color="teal" title="Your new signing secret" data-testid="portal-new-secret">
      <Stack gap="xs">
        <Text size="sm">Copy it now into your receiver&apos;s configuration: it is shown this once.</Text>
        <ShownOnceValue value={secret} copyLabel="Copy secret" testId="portal-secret-value" />
      </Stack>
    </Alert>
  );
}
