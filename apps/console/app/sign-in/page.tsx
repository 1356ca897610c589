import { Alert, Center, Paper, Stack, Text, Title } from '@mantine/core';
import { SignInForm } from './sign-in-form';

export const metadata = { title: 'Sign in · Webhook console' };

interface SignInPageProps {
  searchParams: Promise<{ expired?: string | string[] }>;
}

export default async function SignInPage({ searchParams }: SignInPageProps) {
  const { expired } = await searchParams;
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" w="100%" maw={460}>
        <Stack>
          <div>
            <Title order={2}>Webhook console</Title>
            <Text c="dimmed" size="sm">
              Sign in with a secret key of your team. It is kept in a cookie that scripts in this page cannot read.
            </Text>
          </div>
          {expired !== undefined && (
            <Alert color="yellow" title="Signed out">
              The API no longer accepts the key of this session. Sign in again.
            </Alert>
          )}
          <SignInForm />
        </Stack>
      </Paper>
    </Center>
  );
}
