import type { ReactNode } from 'react';
import { graphql } from '@/gql';
import { consoleRequest, toActionResult } from '@/lib/console-api.server';
import { ConsoleProblem } from './console-problem';
import { ConsoleShell } from './console-shell';

const ConsoleViewerQuery = graphql(`
  query ConsoleViewer {
    viewer {
      teamId
      teamName
    }
  }
`);

/**
 * Every page in this group needs a session the API accepts; the shell shows whose team it is. An ended
 * session goes to sign-in (consoleRequest); any other refusal (suspended, rate limited, unavailable) is
 * explained in place of the page, which could not load either.
 */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const viewer = await toActionResult(() => consoleRequest(ConsoleViewerQuery));
  if (!viewer.ok) return <ConsoleProblem error={viewer.error} />;
  return <ConsoleShell teamName={viewer.data.viewer.teamName}>{children}</ConsoleShell>;
}
