'use client';

import { Input, SegmentedControl } from '@mantine/core';
import type { SignatureScheme } from './endpoint.types';

const SCHEMES: { value: SignatureScheme; label: string }[] = [
  { value: 'hmac', label: 'HMAC (shared secret)' },
  { value: 'ed25519', label: 'Ed25519 (public key)' },
];

/**
 * How deliveries are signed: HMAC `v1` with a secret the receiver shares, or ed25519 `v1a` that the receiver checks
 * with a public key alone (nothing it holds can forge a delivery).
 */
export function SignatureSchemeControl({
  value,
  onChange,
  error,
  description,
}: {
  value: SignatureScheme;
  onChange: (scheme: SignatureScheme) => void;
  error?: string | undefined;
  description: string;
}) {
  return (
    <Input.Wrapper label="Signatures" description={description} error={error}>
      <SegmentedControl
        display="flex"
        w="fit-content"
        mt={6}
        aria-label="Signatures"
        data={SCHEMES}
        value={value}
        onChange={(scheme) => onChange(scheme === 'ed25519' ? 'ed25519' : 'hmac')}
      />
    </Input.Wrapper>
  );
}
