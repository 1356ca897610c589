'use client';

import { Button, CloseButton, Group, Input, Stack, TextInput } from '@mantine/core';
import { newRow, type MetadataRow } from './metadata-rows';

interface MetadataEditorProps {
  rows: MetadataRow[];
  onChange: (rows: MetadataRow[]) => void;
  error?: string | undefined;
}

/** Metadata as key/value rows; text values only, as the API stores them. */
export function MetadataEditor({ rows, onChange, error }: MetadataEditorProps) {
  const update = (id: number, change: Partial<MetadataRow>) =>
    onChange(rows.map((row) => (row.id === id ? { ...row, ...change } : row)));
  return (
    <Input.Wrapper label="Metadata" description="Text values your integration can read back" error={error}>
      <Stack gap="xs" mt={6}>
        {rows.map((row, index) => (
          <Group key={row.id} gap="xs" wrap="nowrap">
            <TextInput
              aria-label={`Metadata key ${index + 1}`}
              placeholder="key"
              value={row.key}
              onChange={(event) => update(row.id, { key: event.currentTarget.value })}
              flex={1}
            />
            <TextInput
              aria-label={`Metadata value ${index + 1}`}
              placeholder="value"
              value={row.value}
              onChange={(event) => update(row.id, { value: event.currentTarget.value })}
              flex={2}
            />
            <CloseButton
              aria-label={`Remove metadata row ${index + 1}`}
              onClick={() => onChange(rows.filter((r) => r.id !== row.id))}
            />
          </Group>
        ))}
        <Button variant="subtle" size="compact-sm" w="fit-content" onClick={() => onChange([...rows, newRow()])}>
          Add metadata
        </Button>
      </Stack>
    </Input.Wrapper>
  );
}
