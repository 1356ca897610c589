import { loadPortalContext, loadPortalEndpoint, loadPortalEventTypes } from '../../../portal.api';
import { EndpointDetail } from '../../../endpoint-detail';

export default async function PortalEndpointPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const [context, { endpoint, deliveries }, eventTypes] = await Promise.all([
    loadPortalContext(),
    loadPortalEndpoint(id),
    loadPortalEventTypes(),
  ]);
  return (
    <EndpointDetail
      endpoint={endpoint}
      deliveries={deliveries}
      eventTypes={eventTypes.map((eventType) => eventType.name)}
      manage={context.session.capabilities === 'manage_endpoints'}
    />
  );
}
