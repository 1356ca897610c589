'use client';

import { useEffect, type ReactNode } from 'react';
import Link from 'next/link';
import { usePathname, useRouter } from 'next/navigation';
import { AppShell, Badge, Group, NavLink, Text, Title } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { PORTAL_ENDED_PATH } from '@/lib/portal-cookie';
import type { PortalContext } from './portal.types';

const PAGES = [
  { href: '/portal', label: 'Endpoints', exact: true },
  { href: '/portal/event-types', label: 'Event catalog', exact: false },
  { href: '/portal/messages', label: 'Messages', exact: false },
] as const;

/** The portal's frame: the operator's name, logo and accent colour, the tenant's name and when the session ends. */
export function PortalShell({ context, children }: { context: PortalContext; children: ReactNode }) {
  const pathname = usePathname();
  const router = useRouter();
  const { branding, expiresAt, capabilities } = context.session;
  const accent = branding.accentColor ?? '#228be6';
  // The session ends at a known time: the page says so then rather than at the next click.
  useEffect(() => {
    const left = Date.parse(expiresAt) - Date.now();
    const timer = setTimeout(() => router.replace(`${PORTAL_ENDED_PATH}?expired=1`), Math.max(0, left) + 500);
    return () => clearTimeout(timer);
  }, [expiresAt, router]);
  return (
    <AppShell header={{ height: 60 }} navbar={{ width: 200, breakpoint: 'sm' }} padding="md">
      <AppShell.Header style={{ background: accent, color: 'white' }} data-testid="portal-header">
        <Group h="100%" px="md" justify="space-between">
          <Group gap="sm">
            {branding.logoUrl ? (
              // The operator's logo, from its https URL (the portal's CSP allows images from https sources).
              <img src={branding.logoUrl} alt="" height={32} data-testid="portal-logo" />
            ) : null}
            <Title order={4} data-testid="portal-title">
              {branding.displayName ?? 'Webhooks'}
            </Title>
          </Group>
          <Group gap="xs">
            <Badge variant="white" color="dark" tt="none" data-testid="portal-tenant">
              {context.tenantName}
            </Badge>
            {capabilities === 'read_only' ? (
              <Badge variant="white" color="gray">
                Read only
              </Badge>
            ) : null}
            <Text size="xs" c="white">
              Session ends <span data-testid="portal-session-ends">{formatTimestamp(expiresAt)}</span>
            </Text>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Portal navigation">
        {PAGES.map((page) => (
          <NavLink
            key={page.href}
            component={Link}
            href={page.href}
            label={page.label}
            color={accent}
            active={
              page.exact
                ? pathname === page.href || pathname.startsWith('/portal/endpoints')
                : pathname.startsWith(page.href)
            }
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>{children}</AppShell.Main>
    </AppShell>
  );
}
