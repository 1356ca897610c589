import { Stack, Title } from '@mantine/core';
import { MessagesTable } from '../../messages-table';
import { loadPortalMessages } from '../../portal.api';

/** The tenant's messages of the last 30 days, newest first; each opens with its deliveries and their attempts. */
export default async function PortalMessagesPage() {
  const messages = await loadPortalMessages();
  return (
    <Stack>
      <Title order={2}>Messages</Title>
      <MessagesTable messages={messages} />
    </Stack>
  );
}
