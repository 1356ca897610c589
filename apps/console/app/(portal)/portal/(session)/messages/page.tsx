import { Stack, Title } from '@mantine/core';
import { searchParam } from '@/lib/list-href';
import { MessagesTable } from '../../messages-table';
import { PagedList } from '../../paged-list';
import { loadPortalMessages } from '../../portal.api';

const PATH = '/portal/messages';

/**
 * The tenant's messages of the last 30 days, newest first, 50 a page; each opens with its deliveries and their
 * attempts.
 */
export default async function PortalMessagesPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const after = searchParam((await searchParams)['after']) || null;
  const messages = await loadPortalMessages(after);
  return (
    <Stack>
      <Title order={2}>Messages</Title>
      <PagedList page={messages} path={PATH} after={after}>
        {(nodes) => <MessagesTable messages={nodes} />}
      </PagedList>
    </Stack>
  );
}
