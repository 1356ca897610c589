'use client';

import { useState } from 'react';
import { Badge, Button, Code, Group, Stack, Tabs, Text, Title } from '@mantine/core';
import { PreviousPublicKeys } from '@/components/previous-public-keys';
import { ShownOnceValue } from '@/components/shown-once-value';
import { notifyApiError } from '@/lib/notify';
import { verifySnippets } from '@/app/(console)/endpoints/[id]/verify-snippets';
import { revealPortalSecret } from './actions';
import type { PortalEndpoint } from './portal.types';

/**
 * How to verify deliveries, after Standard Webhooks, in Node, Python and Go, for HMAC and ed25519 endpoints. The
 * HMAC secret stays hidden until "Reveal" (each reveal is recorded for the operator); an ed25519 public key is not
 * secret.
 */
export function VerifyPanel({ endpoint }: { endpoint: PortalEndpoint }) {
  const [secret, setSecret] = useState<string | null>(null);
  const ed25519 = endpoint.signatureScheme === 'ed25519' && endpoint.publicKey !== null;
  const snippets = verifySnippets(endpoint.signatureScheme, ed25519 ? endpoint.publicKey : null);
  const reveal = async () => {
    const result = await revealPortalSecret(endpoint.id);
    if (!result.ok) notifyApiError(result.error);
    else setSecret(result.data.secret ?? result.data.publicKey);
  };
  return (
    <Stack gap="xs" data-testid="portal-verify">
      <Group gap="xs">
        <Title order={3}>How to verify</Title>
        <Badge variant="light">{ed25519 ? 'ed25519 (v1a)' : 'HMAC (v1)'}</Badge>
      </Group>
      <Text size="sm">
        Every delivery carries <Code>webhook-id</Code>, <Code>webhook-timestamp</Code> and{' '}
        <Code>webhook-signature</Code> headers. Check them against the exact bytes of the body before you trust it.
      </Text>
      {ed25519 ? (
        <ShownOnceValue value={endpoint.publicKey!} copyLabel="Copy public key" testId="portal-public-key" />
      ) : secret ? (
        <ShownOnceValue value={secret} copyLabel="Copy secret" testId="portal-revealed-secret" />
      ) : (
        <Group>
          <Code data-testid="portal-hidden-secret">whsec_••••••••••••••••</Code>
          <Button size="xs" variant="light" onClick={() => void reveal()}>
            Reveal signing secret
          </Button>
        </Group>
      )}
      <PreviousPublicKeys keys={endpoint.publicKeys} />
      <Tabs defaultValue="Node" keepMounted={false}>
        <Tabs.List aria-label="How to verify">
          {snippets.map((snippet) => (
            <Tabs.Tab key={snippet.language} value={snippet.language}>
              {snippet.language}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        {snippets.map((snippet) => (
          <Tabs.Panel key={snippet.language} value={snippet.language} pt="xs">
            <Code block style={{ overflow: 'auto' }} data-testid={`portal-verify-${snippet.language.toLowerCase()}`}>
              {snippet.code}
            </Code>
          </Tabs.Panel>
        ))}
      </Tabs>
    </Stack>
  );
}
