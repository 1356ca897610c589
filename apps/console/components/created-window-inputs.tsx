'use client';

import { TextInput } from '@mantine/core';

interface CreatedWindowInputsProps {
  createdAfter: string;
  createdBefore: string;
  afterError?: string | undefined;
  beforeError?: string | undefined;
}

/** The created-after (inclusive) and created-before (exclusive) filters, in UTC like every time the console shows. */
export function CreatedWindowInputs({
  createdAfter,
  createdBefore,
  afterError,
  beforeError,
}: CreatedWindowInputsProps) {
  return (
    <>
      <TextInput
        type="datetime-local"
        name="createdAfter"
        label="Created after (UTC)"
        defaultValue={createdAfter}
        error={afterError}
        w={220}
      />
      <TextInput
        type="datetime-local"
        name="createdBefore"
        label="Created before (UTC)"
        defaultValue={createdBefore}
        error={beforeError}
        w={220}
      />
    </>
  );
}
