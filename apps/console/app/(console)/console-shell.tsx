'use client';

import type { ReactNode } from 'react';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { AppShell, Badge, Burger, Group, NavLink, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { signOut } from './sign-out-action';

const PAGES = [
  { href: '/dashboard', label: 'Dashboard' },
  { href: '/tenants', label: 'Tenants' },
  { href: '/endpoints', label: 'Endpoints' },
  { href: '/sources', label: 'Sources' },
  { href: '/messages', label: 'Messages' },
  { href: '/dead-letters', label: 'Dead letters' },
  { href: '/replays', label: 'Replays' },
  { href: '/events', label: 'Events' },
  { href: '/feature-flags', label: 'Feature flags' },
  { href: '/event-subscriptions', label: 'Event subscriptions' },
  { href: '/event-types', label: 'Event types' },
  { href: '/usage', label: 'Usage' },
  { href: '/settings', label: 'Settings' },
] as const;

export function ConsoleShell({ teamName, children }: { teamName: string; children: ReactNode }) {
  const [opened, { toggle, close }] = useDisclosure(false);
  const pathname = usePathname();
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Group gap="sm">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Text fw={700} size="lg">
              Webhook console
            </Text>
          </Group>
          <Group gap="xs">
            <Text size="sm" c="dimmed">
              Team
            </Text>
            <Badge variant="light" size="lg" tt="none" data-testid="team-name">
              {teamName}
            </Badge>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main navigation">
        <AppShell.Section grow>
          {PAGES.map((page) => (
            <NavLink
              key={page.href}
              component={Link}
              href={page.href}
              // Prefetching all the pages from every page cost a render of each on the server per page view.
              prefetch={false}
              label={page.label}
              active={pathname === page.href || pathname.startsWith(`${page.href}/`)}
              onClick={close}
            />
          ))}
        </AppShell.Section>
        <AppShell.Section>
          <form action={signOut}>
            <NavLink component="button" type="submit" label="Sign out" />
          </form>
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main>{children}</AppShell.Main>
    </AppShell>
  );
}
