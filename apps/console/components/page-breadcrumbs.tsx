'use client';

import Link from 'next/link';
import { Anchor, Breadcrumbs, Text } from '@mantine/core';

export interface Crumb {
  label: string;
  /** Where the crumb leads; the last crumb (this page) has none. */
  href?: string;
}

/** Where this page sits: each crumb but the last links back up. */
export function PageBreadcrumbs({ crumbs }: { crumbs: Crumb[] }) {
  return (
    <Breadcrumbs>
      {crumbs.map((crumb) =>
        crumb.href ? (
          <Anchor key={crumb.label} component={Link} href={crumb.href} size="sm">
            {crumb.label}
          </Anchor>
        ) : (
          <Text key={crumb.label} size="sm">
            {crumb.label}
          </Text>
        ),
      )}
    </Breadcrumbs>
  );
}
