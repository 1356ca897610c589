'use client';

import { useState } from 'react';
import { Alert, Badge, Code, Group, SegmentedControl, Stack, Tabs, Text, Title } from '@mantine/core';
import type { ActionResult } from '@/lib/api-error';
import { knownProblem } from '@/lib/api-problem';
import { indentJson, isJson } from '@/lib/json-pretty';
import type { MessageContent } from './message.types';

/** Past this many characters a view shows the start and says so; a browser chokes on megabytes of text. */
const SHOWN_CHARS = 200_000;

function Shown({ text, testId }: { text: string; testId: string }) {
  const cut = text.length > SHOWN_CHARS;
  return (
    <Stack gap={4}>
      <Code
        block
        mah={480}
        style={{ overflow: 'auto', whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}
        data-testid={testId}
      >
        {cut ? text.slice(0, SHOWN_CHARS) : text}
      </Code>
      {cut && (
        <Text size="xs" c="dimmed">
          Showing the first {SHOWN_CHARS.toLocaleString('en-US')} of {text.length.toLocaleString('en-US')} characters.
        </Text>
      )}
    </Stack>
  );
}

function toHex(base64: string): string {
  const binary = atob(base64);
  const pairs: string[] = [];
  for (let i = 0; i < binary.length; i++) pairs.push(binary.charCodeAt(i).toString(16).padStart(2, '0'));
  return pairs.join(' ');
}

function BinaryBytes({ content }: { content: MessageContent }) {
  const [encoding, setEncoding] = useState<'base64' | 'hex'>('base64');
  return (
    <Stack gap="xs">
      <Group gap="xs">
        <Badge color="grape" variant="light" tt="none" data-testid="content-binary">
          binary
        </Badge>
        <Text size="sm" c="dimmed">
          Not valid UTF-8 text, so the bytes are shown encoded.
        </Text>
        <SegmentedControl
          size="xs"
          value={encoding}
          onChange={(value) => setEncoding(value === 'hex' ? 'hex' : 'base64')}
          data={[
            { value: 'base64', label: 'Base64' },
            { value: 'hex', label: 'Hex' },
          ]}
          aria-label="Encoding of the bytes"
        />
      </Group>
      <Shown text={encoding === 'hex' ? toHex(content.bodyBase64) : content.bodyBase64} testId="content-exact" />
    </Stack>
  );
}

function ContentViews({ content }: { content: MessageContent }) {
  const pretty = content.text !== null && isJson(content.text) ? indentJson(content.text) : null;
  return (
    <Tabs defaultValue={pretty !== null ? 'pretty' : 'exact'} keepMounted={false}>
      <Tabs.List>
        {pretty !== null && <Tabs.Tab value="pretty">Pretty-printed JSON</Tabs.Tab>}
        <Tabs.Tab value="exact">Exact bytes</Tabs.Tab>
      </Tabs.List>
      {pretty !== null && (
        <Tabs.Panel value="pretty" pt="xs">
          <Shown text={pretty} testId="content-pretty" />
        </Tabs.Panel>
      )}
      <Tabs.Panel value="exact" pt="xs">
        {content.text !== null ? (
          <Shown text={content.text} testId="content-exact" />
        ) : (
          <BinaryBytes content={content} />
        )}
      </Tabs.Panel>
    </Tabs>
  );
}

/** The message's content as accepted: pretty-printed when it is JSON, and its exact bytes; or why it is gone. */
export function MessageContentCard({ content }: { content: ActionResult<MessageContent> }) {
  return (
    <Stack gap="xs">
      <Group gap="xs">
        <Title order={2} size="h3">
          Content
        </Title>
        {content.ok && (
          <Text size="sm" c="dimmed">
            {content.data.contentType} · {content.data.bytes} bytes
          </Text>
        )}
      </Group>
      {content.ok && <ContentViews content={content.data} />}
      {!content.ok && content.error.code === 'payload_expired' && (
        <Alert color="gray" title="Content is gone (payload expired)" maw={720} data-testid="content-gone">
          {content.error.message}. The message&apos;s fields, deliveries and charges stay readable; the content cannot
          be read or replayed again.
        </Alert>
      )}
      {!content.ok && content.error.code !== 'payload_expired' && (
        <Alert color="red" title="Could not load the content" maw={720}>
          {knownProblem(content.error)?.explanation ?? content.error.message}
        </Alert>
      )}
    </Stack>
  );
}
