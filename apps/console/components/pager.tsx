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

/** What the page holds; a filter applied after reading (message status) can leave a page empty with more behind. */
function summary(shown: number, more: boolean): string {
  if (shown > 0) return `${shown} on this page`;
  return more ? 'Nothing on this page; the next page may have more' : 'Nothing to show';
}

/** Cursor paging: forward with the API's nextCursor, and back to the start. */
export function Pager({ firstHref, nextHref, shown }: PagerProps) {
  return (
    <Group justify="space-between" mt="md">
      <Text size="sm" c="dimmed">
        {summary(shown, nextHref !== null)}
      </Text>
      <Group gap="xs">
        <PageLink href={firstHref}>First page</PageLink>
        <PageLink href={nextHref}>Next page</PageLink>
      </Group>
    </Group>
  );
}
