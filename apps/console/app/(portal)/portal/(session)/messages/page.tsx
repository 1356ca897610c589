import { Stack, Title } from '@mantine/core';
import { LoadError } from '@/components/load-error';
import { Pager } from '@/components/pager';
import { listHref, searchParam } from '@/lib/list-href';
import { MessagesTable } from '../../messages-table';
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
      {messages.ok ? (
        <div>
          <MessagesTable messages={messages.data.nodes} />
          <Pager
            shown={messages.data.nodes.length}
            firstHref={after ? PATH : null}
            nextHref={messages.data.nextCursor ? listHref(PATH, { after: messages.data.nextCursor }) : null}
          />
        </div>
      ) : (
        <LoadError error={messages.error} resetHref={PATH} />
      )}
    </Stack>
  );
}
