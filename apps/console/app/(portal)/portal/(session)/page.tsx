import { Badge, Stack, Text, Title } from '@mantine/core';
import { searchParam } from '@/lib/list-href';
import { loadPortalContext, loadPortalEndpoints, loadPortalEventTypeNames } from '../portal.api';
import { NewEndpoint } from '../new-endpoint';
import { EndpointsTable } from '../endpoints-table';
import { PagedList } from '../paged-list';

const PATH = '/portal';

/** The tenant's endpoints, 50 a page, with their state and circuit at a glance, and a form to add one. */
export default async function PortalEndpointsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const after = searchParam((await searchParams)['after']) || null;
  const [context, endpoints, eventTypes] = await Promise.all([
    loadPortalContext(),
    loadPortalEndpoints(after),
    loadPortalEventTypeNames(),
  ]);
  const manage = context.session.capabilities === 'manage_endpoints';
  return (
    <Stack>
      <Title order={2}>Endpoints</Title>
      <Text size="sm" c="dimmed">
        Where {context.session.branding.displayName ?? 'the service'} sends your webhooks.
      </Text>
      <PagedList page={endpoints} path={PATH} after={after}>
        {(nodes) => <EndpointsTable endpoints={nodes} />}
      </PagedList>
      {manage ? <NewEndpoint eventTypes={eventTypes} /> : <Badge>Read only</Badge>}
    </Stack>
  );
}
