import { Alert, Container, Stack, Text, Title } from '@mantine/core';

const REASONS: Record<string, string> = {
  link: 'This link has already been used, has expired or was withdrawn. Links open once: ask for a new one.',
  unavailable: 'The service cannot be reached right now. Try the link again in a moment.',
};

/**
 * Why a portal session is over or a link does not open. It names no operator and links nowhere: the session that
 * would say whose portal this was has ended.
 */
export function PortalEndedNotice({ reason }: { reason: string | undefined }) {
  const text = reason === undefined ? undefined : REASONS[reason];
  return (
    <Container size="sm" py="xl">
      <Stack>
        <Title order={1}>Your session has ended</Title>
        <Alert color="yellow" title="This portal session is over" data-testid="portal-ended">
          <Text size="sm">
            {text ??
              'Portal sessions last a limited time and end when they are withdrawn. Ask the service that sent you the link for a new one.'}
          </Text>
        </Alert>
      </Stack>
    </Container>
  );
}
