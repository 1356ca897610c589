import { Badge, Stack, Text, Title } from '@mantine/core';
import { loadPortalContext, loadPortalEndpoints, loadPortalEventTypes } from '../portal.api';
import { NewEndpoint } from '../new-endpoint';
import { EndpointsTable } from '../endpoints-table';

/** The tenant's endpoints, with their state and circuit at a glance, and a form to add one. */
export default async function PortalEndpointsPage() {
  const [context, endpoints, eventTypes] = await Promise.all([
    loadPortalContext(),
    loadPortalEndpoints(),
    loadPortalEventTypes(),
  ]);
  const manage = context.session.capabilities === 'manage_endpoints';
  return (
    <Stack>
      <Title order={2}>Endpoints</Title>
      <Text size="sm" c="dimmed">
        Where {context.session.branding.displayName ?? 'the service'} sends your webhooks.
      </Text>
      <EndpointsTable endpoints={endpoints} />
      {manage ? <NewEndpoint eventTypes={eventTypes.map((eventType) => eventType.name)} /> : <Badge>Read only</Badge>}
    </Stack>
  );
}
