import Link from 'next/link';
import { Anchor, Text } from '@mantine/core';
import type { PortalDelivery } from './portal.types';

/**
 * "To <endpoint> at <URL>": the URL of the revision the delivery's last attempt went to (the next attempt's before
 * any); a revision from before URLs were recorded shows the current URL and says so.
 */
export function PortalDeliveryTarget({ delivery }: { delivery: Pick<PortalDelivery, 'endpointId' | 'target'> }) {
  const { target } = delivery;
  return (
    <Text size="xs" data-testid="portal-delivery-target">
      To{' '}
      <Anchor component={Link} href={`/portal/endpoints/${delivery.endpointId}`} size="xs">
        {target.endpointName}
      </Anchor>{' '}
      at{' '}
      <Text span ff="monospace" size="xs" style={{ wordBreak: 'break-all' }} data-testid="portal-delivery-url">
        {target.url}
      </Text>
      {target.urlRecorded ? '' : ' (current URL; the URL this delivery went to was not recorded)'}
    </Text>
  );
}
