'use client';

import { Badge, Code, Group, Stack, Tabs, Text, Title } from '@mantine/core';
import { PreviousPublicKeys } from '@/components/previous-public-keys';
import { ShownOnceValue } from '@/components/shown-once-value';
import type { Endpoint } from '../endpoint.types';
import { verifySnippets } from './verify-snippets';

/**
 * How this endpoint signs and how its receiver checks it: the scheme, the public key of an ed25519 endpoint (safe to
 * hand to the receiver), and a verification snippet per language. An HMAC secret is never shown here: its snippet
 * reads it from the receiver's environment.
 */
export function EndpointSigningCard({ endpoint }: { endpoint: Endpoint }) {
  const ed25519 = endpoint.signatureScheme === 'ed25519' && endpoint.publicKey !== null;
  const snippets = verifySnippets(endpoint.signatureScheme, ed25519 ? endpoint.publicKey! : null);
  return (
    <Stack gap="xs">
      <Group gap="xs">
        <Title order={2} size="h3">
          Signing
        </Title>
        <Badge variant="light" data-testid="signature-scheme">
          {ed25519 ? 'ed25519 (v1a)' : 'HMAC (v1)'}
        </Badge>
      </Group>
      {ed25519 ? (
        <>
          <Text size="sm">
            Receivers verify with this public key alone; it cannot sign, so it may be shared freely.
          </Text>
          <ShownOnceValue value={endpoint.publicKey!} copyLabel="Copy public key" testId="public-key" />
        </>
      ) : (
        <Text size="sm">Receivers verify with the signing secret shown once when it was created or last rotated.</Text>
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
            <Code block style={{ overflow: 'auto' }} data-testid={`verify-${snippet.language.toLowerCase()}`}>
              {snippet.code}
            </Code>
          </Tabs.Panel>
        ))}
      </Tabs>
    </Stack>
  );
}
