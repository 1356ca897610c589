import { loadPortalContext, loadPortalMessage, loadPortalMessageContent } from '../../../portal.api';
import { MessageDetail } from '../../../message-detail';

export default async function PortalMessagePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const [context, message, content] = await Promise.all([
    loadPortalContext(),
    loadPortalMessage(id),
    loadPortalMessageContent(id),
  ]);
  return (
    <MessageDetail message={message} content={content} manage={context.session.capabilities === 'manage_endpoints'} />
  );
}
