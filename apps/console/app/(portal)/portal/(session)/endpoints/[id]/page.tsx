import { searchParam } from '@/lib/list-href';
import {
  loadPortalContext,
  loadPortalEndpoint,
  loadPortalEndpointStream,
  loadPortalEventTypeNames,
} from '../../../portal.api';
import { EndpointDetail } from '../../../endpoint-detail';

export default async function PortalEndpointPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { id } = await params;
  const after = searchParam((await searchParams)['after']) || null;
  const [context, { endpoint, deliveries }, eventTypes] = await Promise.all([
    loadPortalContext(),
    loadPortalEndpoint(id, after),
    loadPortalEventTypeNames(),
  ]);
  const stream = endpoint.deliveryMode === 'stream' ? await loadPortalEndpointStream(endpoint.id) : null;
  return (
    <EndpointDetail
      endpoint={endpoint}
      deliveries={deliveries}
      after={after}
      eventTypes={eventTypes}
      manage={context.session.capabilities === 'manage_endpoints'}
      stream={stream}
    />
  );
}
