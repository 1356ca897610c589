'use client';

import { Alert, Button, Stack } from '@mantine/core';

/** A page whose data could not be loaded: say so and offer to try again. */
export default function ConsoleError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <Stack maw={640}>
      <Alert color="red" title="This page could not be loaded">
        {error.digest ? 'The console server could not load this page. Its log has the details.' : error.message}
      </Alert>
      <Button variant="light" onClick={reset} w="fit-content">
        Try again
      </Button>
    </Stack>
  );
}
