'use client';

import { useState, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import { Button, Group, TextInput } from '@mantine/core';

/** Opens a message by its ID (wdm_...), as support staff get it from a receiver's webhook-id header. */
export function OpenMessageForm() {
  const router = useRouter();
  const [id, setId] = useState('');
  const [problem, setProblem] = useState<string | null>(null);

  const open = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const trimmed = id.trim();
    if (!/^wdm_[A-Za-z0-9]+$/.test(trimmed)) {
      setProblem('A message ID starts with wdm_ (the webhook-id header of its deliveries).');
      return;
    }
    setProblem(null);
    router.push(`/messages/${encodeURIComponent(trimmed)}`);
  };

  return (
    <form onSubmit={open} noValidate aria-label="Open a message">
      <Group align="flex-start">
        <TextInput
          label="Message ID"
          placeholder="wdm_..."
          value={id}
          onChange={(event) => setId(event.currentTarget.value)}
          error={problem}
          w={420}
          styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
        />
        <Button type="submit" variant="light" mt={25}>
          Open
        </Button>
      </Group>
    </form>
  );
}
