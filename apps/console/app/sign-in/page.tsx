import { Alert, Center, Paper, Stack, Text, Title } from '@mantine/core';
import { SignInForm } from './sign-in-form';

export const metadata = { title: 'Sign in · Webhook console' };

interface SignInPageProps {
  searchParams: Promise<{ expired?: string | string[]; unconfirmed?: string | string[] }>;
}

export default async function SignInPage({ searchParams }: SignInPageProps) {
  const { expired, unconfirmed } = await searchParams;
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" w="100%" maw={460}>
        <Stack>
          <div>
            <Title order={1} size="h2">
              Webhook console
            </Title>
            <Text c="dimmed" size="sm">
              Sign in with a secret key of your team. The console does not keep the key: it opens a session of at most
              12 hours, kept in a cookie that scripts in this page cannot read. Sign out ends it.
            </Text>
          </div>
          {expired !== undefined && (
            <Alert color="yellow" title="Signed out">
              Your console session has ended: it expired, was signed out, or its key was revoked. Sign in again.
            </Alert>
          )}
          {unconfirmed !== undefined && (
            <Alert color="yellow" title="Signed out in this browser">
              The API could not be reached to end the session; it ends on its own within 12 hours.
            </Alert>
          )}
          <SignInForm />
        </Stack>
      </Paper>
    </Center>
  );
}
