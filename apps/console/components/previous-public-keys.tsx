import { Stack, Text } from '@mantine/core';
import { ShownOnceValue } from '@/components/shown-once-value';
import { formatTimestamp } from '@/lib/format';

/**
 * The ed25519 public keys that still sign from a rotation overlap, each with when it stops (the current key is shown
 * on its own): a receiver that has not switched yet keeps verifying with it until then.
 */
export function PreviousPublicKeys({ keys }: { keys: readonly { publicKey: string; expiresAt: string | null }[] }) {
  return keys
    .filter((key) => key.expiresAt !== null)
    .map((key) => (
      <Stack gap={2} key={key.publicKey} data-testid="previous-public-key">
        <Text size="sm">
          The previous public key still signs until {formatTimestamp(key.expiresAt!)}: each delivery carries a signature
          from both keys until then.
        </Text>
        <ShownOnceValue value={key.publicKey} copyLabel="Copy previous public key" testId="old-public-key" />
      </Stack>
    ));
}
