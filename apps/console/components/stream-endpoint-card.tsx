'use client';

import { useState, useTransition, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import { Alert, Button, Code, Group, Modal, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { fieldMessage, type ActionResult, type ApiError } from '@/lib/api-error';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { formatTimestamp } from '@/lib/format';
import { ConfirmModal } from '@/components/confirm-modal';
import { EmptyTableRow } from '@/components/empty-table-row';
import { FormActions } from '@/components/form-actions';
import { ShownOnceValue } from '@/components/shown-once-value';
import { useSecretReveal } from '@/lib/use-secret-reveal';
import { listenCommand } from '@/lib/listen-command';

interface StreamToken {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt?: string | null;
}

interface StreamConnection {
  id: string;
  tokenId: string;
  openedAt: string;
  remoteAddress: string;
  unacknowledged: number;
}

/** What the console and the portal each call to change tokens (their own server actions). */
export interface StreamTokenActions {
  /** The new token (null in an idempotent replay, which cannot show it again). */
  create(endpointId: string, name: string, idempotencyKey: string): Promise<ActionResult<{ token: string | null }>>;
  revoke(endpointId: string, tokenId: string): Promise<ActionResult<unknown>>;
}

interface StreamEndpointCardProps {
  endpointId: string;
  /** Where the receiver connects (GET, with a token); null when the API could not say. */
  streamUrl: string | null;
  connections: StreamConnection[];
  tokens: StreamToken[];
  /** Whether tokens can be made and revoked here (a read-only portal session only reads). */
  manage: boolean;
  actions: StreamTokenActions;
}

/** Names a new token; the token is shown once, in the listen command to copy. */
function CreateTokenForm({
  endpointId,
  create,
  onCreated,
  onCancel,
}: {
  endpointId: string;
  create: StreamTokenActions['create'];
  onCreated: (token: string | null) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState('');
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    startTransition(async () => {
      const result = await callAction(() => create(endpointId, name, idempotency.key));
      idempotency.settle(result);
      if (!result.ok) {
        setError(result.error);
        if (result.error.field !== 'name') notifyApiError(result.error);
        return;
      }
      onCreated(result.data.token);
    });
  };
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        <TextInput
          label="Name"
          description="Where it is used, to tell tokens apart: laptop, staging receiver (optional)"
          value={name}
          onChange={(event) => setName(event.currentTarget.value)}
          error={fieldMessage(error, 'name')}
          maxLength={100}
          data-autofocus
        />
        <FormActions pending={pending} onCancel={onCancel} confirmLabel="Create token" />
      </Stack>
    </form>
  );
}

function RevokeTokenButton({
  endpointId,
  token,
  revoke,
}: {
  endpointId: string;
  token: StreamToken;
  revoke: StreamTokenActions['revoke'];
}) {
  const router = useRouter();
  const [opened, { open, close }] = useDisclosure(false);
  const [pending, startTransition] = useTransition();
  const confirm = () =>
    startTransition(async () => {
      const result = await revoke(endpointId, token.id);
      close();
      if (!result.ok) notifyApiError(result.error);
      else notifySuccess(`Stream token ${token.name || token.id} revoked.`);
      router.refresh();
    });
  return (
    <>
      <Button size="xs" variant="light" color="red" onClick={open} aria-label={`Revoke ${token.name || token.id}`}>
        Revoke
      </Button>
      <ConfirmModal
        opened={opened}
        onClose={close}
        title="Revoke stream token"
        confirmLabel="Revoke token"
        pending={pending}
        onConfirm={confirm}
      >
        Revoke <b>{token.name || token.id}</b>? Streams open with it end at once and it opens none again. This cannot be
        undone.
      </ConfirmModal>
    </>
  );
}

/**
 * A stream endpoint has no URL: its receiver connects to it (docs/streams.md). The card shows the command that does
 * it (`npm run listen`), the open connections, and the tokens, with create (shown once) and revoke; the console's
 * endpoint page and the portal's both use it, each with its own actions.
 */
export function StreamEndpointCard({
  endpointId,
  streamUrl,
  connections,
  tokens,
  manage,
  actions,
}: StreamEndpointCardProps) {
  const router = useRouter();
  const [opened, { open, close }] = useDisclosure(false);
  const reveal = useSecretReveal<string | null>();
  const command = listenCommand(endpointId, streamUrl, null);
  return (
    <Stack gap="sm">
      <Title order={2} size="h3">
        Stream
      </Title>
      <Text size="sm">
        Deliveries wait for a receiver to connect. From a checkout of the service, this forwards them to a local server
        (replace the token with one created below):
      </Text>
      <ShownOnceValue value={command} copyLabel="Copy command" testId="listen-command" />
      {streamUrl && (
        <Text size="xs" c="dimmed">
          Stream URL <Code>{streamUrl}</Code>
        </Text>
      )}
      <Title order={3} size="h4">
        Open connections
      </Title>
      <Table aria-label="Open stream connections">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Since</Table.Th>
            <Table.Th>From</Table.Th>
            <Table.Th>Token</Table.Th>
            <Table.Th>Unacknowledged</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {connections.length === 0 ? (
            <EmptyTableRow columns={4}>No receiver is connected.</EmptyTableRow>
          ) : (
            connections.map((connection) => (
              <Table.Tr key={connection.id}>
                <Table.Td>{formatTimestamp(connection.openedAt)}</Table.Td>
                <Table.Td ff="monospace">{connection.remoteAddress}</Table.Td>
                <Table.Td>
                  {tokens.find((token) => token.id === connection.tokenId)?.name || connection.tokenId}
                </Table.Td>
                <Table.Td>{connection.unacknowledged}</Table.Td>
              </Table.Tr>
            ))
          )}
        </Table.Tbody>
      </Table>
      <Group justify="space-between">
        <Title order={3} size="h4">
          Tokens
        </Title>
        {manage && (
          <Button size="xs" onClick={open}>
            Create token
          </Button>
        )}
      </Group>
      <Table aria-label="Stream tokens">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th>Last used</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {tokens.length === 0 ? (
            <EmptyTableRow columns={4}>No tokens: create one to connect.</EmptyTableRow>
          ) : (
            tokens.map((token) => (
              <Table.Tr key={token.id}>
                <Table.Td>{token.name || <Text c="dimmed">{token.id}</Text>}</Table.Td>
                <Table.Td>{formatTimestamp(token.createdAt)}</Table.Td>
                <Table.Td>{token.lastUsedAt ? formatTimestamp(token.lastUsedAt) : 'never'}</Table.Td>
                <Table.Td ta="right">
                  {manage && <RevokeTokenButton endpointId={endpointId} token={token} revoke={actions.revoke} />}
                </Table.Td>
              </Table.Tr>
            ))
          )}
        </Table.Tbody>
      </Table>
      <Modal opened={opened} onClose={close} title="New stream token">
        <CreateTokenForm
          endpointId={endpointId}
          create={actions.create}
          onCancel={close}
          onCreated={(token) => {
            close();
            if (token === null) notifySuccess('Token created; it was shown when it was first created.');
            else reveal.reveal(token);
            router.refresh();
          }}
        />
      </Modal>
      <Modal
        opened={reveal.opened && reveal.secret !== null}
        onClose={reveal.close}
        onExitTransitionEnd={reveal.forget}
        title="Stream token"
        size="xl"
        closeOnClickOutside={false}
      >
        {reveal.secret != null && (
          <Stack>
            <Alert color="yellow" title="Store it now">
              This token is shown once; it cannot be shown again. It opens this endpoint&apos;s stream and nothing else.
            </Alert>
            <ShownOnceValue value={reveal.secret} copyLabel="Copy token" testId="stream-token" />
            <Text size="sm">The command with it:</Text>
            <ShownOnceValue
              value={listenCommand(endpointId, streamUrl, reveal.secret)}
              copyLabel="Copy command"
              testId="listen-command-with-token"
            />
            <Group justify="flex-end">
              <Button onClick={reveal.close}>I have stored it</Button>
            </Group>
          </Stack>
        )}
      </Modal>
    </Stack>
  );
}
