import type { ReactNode } from 'react';
import { consoleRequest } from '@/lib/console-api.server';
import { ConsoleShell } from './console-shell';

const VIEWER = `query ConsoleViewer { viewer { teamId teamName } }`;

/** Every page in this group needs a key the API accepts; the shell shows whose team it is. */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const { viewer } = await consoleRequest<{ viewer: { teamId: string; teamName: string } }>(VIEWER);
  return <ConsoleShell teamName={viewer.teamName}>{children}</ConsoleShell>;
}
