'use client';

import type { FormEvent, ReactNode } from 'react';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { Button, Group } from '@mantine/core';
import { listHref } from '@/lib/list-href';

interface FilterBarProps {
  /** The list page the filters apply to. */
  path: string;
  /** Names the form for assistive technology ("Find messages"). */
  label: string;
  /** Whether any filter is set, so "Clear filters" has something to clear. */
  active: boolean;
  /** Where "Clear filters" leads, when a choice outside these filters (a status switch) should stay. */
  clearHref?: string;
  /** Named inputs (text inputs, selects with a `name`); their non-empty values become the URL's parameters. */
  children: ReactNode;
}

/**
 * Several filters of a list, kept in the URL so they survive paging and reloads. Unlike ListFilter (one text field
 * sent by a plain form), empty fields are left out of the URL, so picked-then-cleared selects leave no trace. The
 * page remounts it with the URL's values (key it by them).
 */
export function FilterBar({ path, label, active, clearHref = path, children }: FilterBarProps) {
  const router = useRouter();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const params: Record<string, string> = {};
    for (const [name, value] of new FormData(event.currentTarget))
      if (typeof value === 'string' && value.trim() !== '') params[name] = value.trim();
    router.push(listHref(path, params));
  };
  return (
    <form onSubmit={submit} noValidate aria-label={label}>
      <Group align="flex-start" gap="xs">
        {children}
        <Group gap="xs" mt={25}>
          <Button type="submit" variant="light">
            Find
          </Button>
          {active && (
            <Button component={Link} href={clearHref} variant="subtle">
              Clear filters
            </Button>
          )}
        </Group>
      </Group>
    </form>
  );
}
