import { Stack, Text, Title } from '@mantine/core';
import { searchParam } from '@/lib/list-href';
import { MessageSearch } from '../../message-search';
import { MessagesTable } from '../../messages-table';
import { PagedList } from '../../paged-list';
import { findPortalMessage, loadPortalMessages } from '../../portal.api';
import type { PortalMessageSearchField } from '../../portal.types';

const PATH = '/portal/messages';

function searchField(value: string): PortalMessageSearchField {
  return value === 'id' || value === 'eventType' ? value : 'externalId';
}

/**
 * The tenant's messages of the last 30 days, newest first, 50 a page; each opens with its payload, its deliveries
 * and their attempts. A search by message ID shows that message alone; by external ID or event type, the matching
 * messages, newest first.
 */
export default async function PortalMessagesPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const after = searchParam(params['after']) || null;
  const value = searchParam(params['q']).trim();
  const by = value ? searchField(searchParam(params['by'])) : 'externalId';
  let body;
  if (value && by === 'id') {
    const found = await findPortalMessage(value);
    body = found.ok ? (
      <MessagesTable messages={[found.data]} emptyText="" />
    ) : (
      <Text size="sm" data-testid="portal-message-not-found">
        No message of yours has the ID {value} (messages are kept 30 days).
      </Text>
    );
  } else {
    const messages = await loadPortalMessages(after, value ? { [by]: value } : {});
    body = (
      <PagedList page={messages} path={PATH} params={value ? { by, q: value } : {}} after={after}>
        {(nodes) => (
          <MessagesTable
            messages={nodes}
            emptyText={value ? 'No message matches the search.' : 'No messages in the last 30 days.'}
          />
        )}
      </PagedList>
    );
  }
  return (
    <Stack>
      <Title order={2}>Messages</Title>
      <MessageSearch by={by} value={value} />
      {body}
    </Stack>
  );
}
