'use client';

import { Text } from '@mantine/core';
import type { AttemptErrorDetailFieldsFragment } from '@/gql/graphql';

/** An attempt's errorDetail as the console and the portal read it (GraphQL `AttemptErrorDetail`). */
export type AttemptErrorDetailView = AttemptErrorDetailFieldsFragment;

const PHASES: Record<string, string> = {
  dns: 'resolving the host name',
  connect: 'connecting',
  tls: 'the TLS handshake',
  request: 'waiting for the response headers',
  response: 'reading the response',
};

const CAUSES: Record<string, string> = {
  no_such_host: 'no such host',
  dns_failure: 'DNS failure',
  unsafe_host: 'host refused by the URL safety rules',
  unsafe_address: 'address refused by the URL safety rules',
  refused: 'connection refused',
  unreachable: 'host unreachable',
  timeout: 'timed out',
  reset: 'connection reset',
  closed: 'connection closed by the receiver',
  certificate_expired: 'certificate expired',
  certificate_not_yet_valid: 'certificate not yet valid',
  certificate_wrong_host: 'certificate is for another host',
  certificate_untrusted: 'certificate not trusted',
  handshake_failed: 'TLS handshake failed',
  too_large: 'response too large',
  invalid_response: 'not an HTTP response',
  other: 'network error',
};

/** "dns 3 ms · connect 1 ms · tls 5 ms · first byte 40 ms · total 41 ms", phases not reached left out. */
export function describeTimings(timings: AttemptErrorDetailView['timingsMs']): string {
  const parts: [string, number | null][] = [
    ['dns', timings.dns],
    ['connect', timings.connect],
    ['tls', timings.tls],
    ['first byte', timings.firstByte],
    ['total', timings.total],
  ];
  return parts
    .filter((part): part is [string, number] => part[1] !== null)
    .map(([name, ms]) => `${name} ${ms} ms`)
    .join(' · ');
}

/** Where and why an attempt without an HTTP answer failed: the cause, the phase, the address and the timings. */
export function AttemptNetworkDetail({ detail }: { detail: AttemptErrorDetailView | null }) {
  if (detail === null) return null;
  const address =
    detail.address === null ? null : detail.port === null ? detail.address : `${detail.address}:${detail.port}`;
  return (
    <div data-testid="attempt-network-detail">
      <Text size="xs" data-testid="attempt-failure-cause">
        {CAUSES[detail.cause] ?? detail.cause} while {PHASES[detail.phase] ?? detail.phase}
        {detail.code !== null ? ` (${detail.code})` : ''}
      </Text>
      <Text size="xs" c="dimmed" data-testid="attempt-failure-timings">
        {address !== null ? `${address} · ` : ''}
        {detail.connectionReused ? 'reused connection · ' : ''}
        {describeTimings(detail.timingsMs)}
      </Text>
    </div>
  );
}

/** Said where an attempt kept no response body: how to turn response body logging on (who can depends on the view). */
export function ResponseBodyHint({ audience }: { audience: 'team' | 'receiver' }) {
  return (
    <Text size="xs" c="dimmed" data-testid="response-body-hint">
      No response body kept.{' '}
      {audience === 'team'
        ? 'Response bodies are off by default: turn on Response body logging in Settings (response_body_logging) to keep up to 4 KiB of later answers.'
        : 'Response bodies are off by default: ask the sender to turn on response body logging (response_body_logging) to see up to 4 KiB of later answers.'}
    </Text>
  );
}
