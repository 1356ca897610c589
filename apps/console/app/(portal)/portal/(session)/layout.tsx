import type { ReactNode } from 'react';
import type { Metadata } from 'next';
import { loadPortalContext } from '../portal.api';
import { PortalShell } from '../portal-shell';

export const metadata: Metadata = { title: 'Webhooks', description: 'Your webhook endpoints and deliveries' };

/**
 * Every page of the portal needs a live portal session (else the ended page explains why). The shell shows the
 * operator's branding and nothing of the operator's console: no link leads there.
 */
export default async function PortalLayout({ children }: { children: ReactNode }) {
  const context = await loadPortalContext();
  return <PortalShell context={context}>{children}</PortalShell>;
}
