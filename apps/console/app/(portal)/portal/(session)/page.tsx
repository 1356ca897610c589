import Link from 'next/link';
import { Anchor, Badge, Stack, Table, Text, Title } from '@mantine/core';
import { loadPortalContext, loadPortalEndpoints, loadPortalEventTypes } from '../portal.api';
import { NewEndpoint } from '../new-endpoint';
import { CircuitBadge, StatusBadge } from '../badges';

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
      <Table striped data-testid="portal-endpoints">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>URL</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Circuit</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {endpoints.length === 0 ? (
            <Table.Tr>
              <Table.Td colSpan={4}>No endpoints yet.</Table.Td>
            </Table.Tr>
          ) : (
            endpoints.map((endpoint) => (
              <Table.Tr key={endpoint.id}>
                <Table.Td>
                  <Anchor component={Link} href={`/portal/endpoints/${endpoint.id}`}>
                    {endpoint.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>
                  <Text size="sm" ff="monospace">
                    {endpoint.url}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <StatusBadge status={endpoint.status} />
                </Table.Td>
                <Table.Td>
                  <CircuitBadge circuit={endpoint.health.circuit} />
                </Table.Td>
              </Table.Tr>
            ))
          )}
        </Table.Tbody>
      </Table>
      {manage ? <NewEndpoint eventTypes={eventTypes.map((eventType) => eventType.name)} /> : <Badge>Read only</Badge>}
    </Stack>
  );
}
