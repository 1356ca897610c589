'use client';

import { useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { Alert, Button, Center, Group, Paper, Stack, Text, Title } from '@mantine/core';
import type { ApiError } from '@/lib/api-error';
import { knownProblem } from '@/lib/api-problem';
import { signOut } from './sign-out-action';

/**
 * What every console page shows when the API refuses the session itself (account suspended, rate limited,
 * unavailable): the page cannot be built, so it says why and offers to try again or to sign out.
 */
export function ConsoleProblem({ error }: { error: ApiError }) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const problem = knownProblem(error) ?? { title: 'The console could not load', explanation: error.message };
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" w="100%" maw={560}>
        <Stack>
          <Title order={1} size="h2">
            Webhook console
          </Title>
          <Alert color="red" title={problem.title} role="alert">
            <Text size="sm">{problem.explanation}</Text>
            {knownProblem(error) && error.message !== '' && (
              <Text size="xs" c="dimmed" mt="xs">
                The API said: {error.message}
              </Text>
            )}
          </Alert>
          <Group>
            <Button variant="light" loading={pending} onClick={() => startTransition(() => router.refresh())}>
              Try again
            </Button>
            <form action={signOut}>
              <Button type="submit" variant="default">
                Sign out
              </Button>
            </form>
          </Group>
        </Stack>
      </Paper>
    </Center>
  );
}
