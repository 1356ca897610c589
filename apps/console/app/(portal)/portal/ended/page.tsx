import { Alert, Container, Stack, Text, Title } from '@mantine/core';

const REASONS: Record<string, string> = {
  link: 'This link has already been used, has expired or was withdrawn. Links open once: ask for a new one.',
  unavailable: 'The service cannot be reached right now. Try the link again in a moment.',
};

/**
 * Where the portal goes when its session is over (expired, revoked, its tenant deleted) or a link does not open.
 * It names no operator and links nowhere: the session that would say whose portal this was has ended.
 */
export default async function PortalEndedPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const reason = typeof params['reason'] === 'string' ? REASONS[params['reason']] : undefined;
  return (
    <Container size="sm" py="xl">
      <Stack>
        <Title order={1}>Your session has ended</Title>
        <Alert color="yellow" title="This portal session is over" data-testid="portal-ended">
          <Text size="sm">
            {reason ??
              'Portal sessions last a limited time and end when they are withdrawn. Ask the service that sent you the link for a new one.'}
          </Text>
        </Alert>
      </Stack>
    </Container>
  );
}
