import { Badge } from '@mantine/core';

const STATUS_COLOURS: Record<string, string> = { enabled: 'green', paused: 'gray', disabled: 'red' };
const CIRCUIT_COLOURS: Record<string, string> = { closed: 'green', half_open: 'yellow', open: 'red' };
const DELIVERY_COLOURS: Record<string, string> = {
  succeeded: 'green',
  failed: 'red',
  expired: 'red',
  retry_wait: 'yellow',
  in_flight: 'blue',
  queued: 'blue',
  scheduled: 'gray',
  canceled: 'gray',
};

export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge color={STATUS_COLOURS[status] ?? 'gray'} variant="light" data-testid="portal-endpoint-status">
      {status}
    </Badge>
  );
}

export function CircuitBadge({ circuit }: { circuit: string }) {
  return (
    <Badge color={CIRCUIT_COLOURS[circuit] ?? 'gray'} variant="outline" data-testid="portal-circuit">
      circuit {circuit.replace('_', ' ')}
    </Badge>
  );
}

export function DeliveryBadge({ status }: { status: string }) {
  return (
    <Badge color={DELIVERY_COLOURS[status] ?? 'gray'} variant="light" data-testid="portal-delivery-status">
      {status.replace('_', ' ')}
    </Badge>
  );
}
