'use client';

import type { ReactNode } from 'react';
import Link from 'next/link';
import { Button, Group, Text } from '@mantine/core';

interface PagerProps {
  /** Link to the first page, or null when this is the first page. */
  firstHref: string | null;
  /** Link to the next page, or null when this is the last page. */
  nextHref: string | null;
  shown: number;
}

function PageLink({ href, children }: { href: string | null; children: ReactNode }) {
  if (href === null)
    return (
      <Button variant="default" disabled>
        {children}
      </Button>
    );
  return (
    <Button variant="default" component={Link} href={href}>
      {children}
    </Button>
  );
}

/** Cursor paging: forward with the API's nextCursor, and back to the start. */
export function Pager({ firstHref, nextHref, shown }: PagerProps) {
  return (
    <Group justify="space-between" mt="md">
      <Text size="sm" c="dimmed">
        {shown === 0 ? 'Nothing to show' : `${shown} on this page`}
      </Text>
      <Group gap="xs">
        <PageLink href={firstHref}>First page</PageLink>
        <PageLink href={nextHref}>Next page</PageLink>
      </Group>
    </Group>
  );
}
