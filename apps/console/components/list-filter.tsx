'use client';

import Form from 'next/form';
import Link from 'next/link';
import { Button, Group, TextInput } from '@mantine/core';

interface ListFilterProps {
  action: string;
  param: string;
  label: string;
  value: string;
  error?: string | undefined;
}

/** An exact-match filter of a list, kept in the URL so it survives paging and reloads. */
export function ListFilter({ action, param, label, value, error }: ListFilterProps) {
  return (
    <Form action={action}>
      <Group align="flex-end" gap="xs">
        <TextInput name={param} label={label} defaultValue={value} error={error} w={280} />
        <Button type="submit" variant="light">
          Find
        </Button>
        {value !== '' && (
          <Button component={Link} href={action} variant="subtle">
            Show all
          </Button>
        )}
      </Group>
    </Form>
  );
}
