'use client';

import Link from 'next/link';
import { Anchor, Text } from '@mantine/core';
import type { Delivery } from './delivery.types';

/**
 * "To <endpoint name> at <URL>": the URL of the revision the delivery's last attempt went to (the next attempt's,
 * before any). A revision from before URLs were recorded shows the current URL and says so (docs/deliveries.md).
 */
export function DeliveryTargetLine({ delivery }: { delivery: Pick<Delivery, 'endpointId' | 'target'> }) {
  const { target } = delivery;
  return (
    <Text size="sm" data-testid="delivery-target">
      To{' '}
      <Anchor component={Link} href={`/endpoints/${encodeURIComponent(delivery.endpointId)}`} size="sm">
        {target.endpointName}
      </Anchor>{' '}
      at{' '}
      <Text span ff="monospace" size="xs" style={{ wordBreak: 'break-all' }} data-testid="delivery-url">
        {target.url}
      </Text>{' '}
      <Text span size="xs" c="dimmed" data-testid="delivery-url-revision">
        {target.urlRecorded
          ? `(URL revision ${target.urlRevision})`
          : `(current URL; the URL of revision ${target.urlRevision} was not recorded)`}
      </Text>
    </Text>
  );
}
