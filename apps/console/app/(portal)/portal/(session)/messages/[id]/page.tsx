import { loadPortalContext, loadPortalMessage } from '../../../portal.api';
import { MessageDetail } from '../../../message-detail';

export default async function PortalMessagePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const [context, message] = await Promise.all([loadPortalContext(), loadPortalMessage(id)]);
  return <MessageDetail message={message} manage={context.session.capabilities === 'manage_endpoints'} />;
}
