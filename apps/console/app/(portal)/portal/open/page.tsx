import type { Metadata } from 'next';
import { Alert, Button, Container, Stack, Text, Title } from '@mantine/core';
import { graphql } from '@/gql';
import { ApiFailure, sendGraphql } from '@/lib/graphql.server';
import { searchParam } from '@/lib/list-href';
import { PORTAL_OPEN_PATH } from '@/lib/portal-cookie';
import { PortalEndedNotice } from '../ended/ended-notice';

const PortalLinkQuery = graphql(`
  query PortalLink($linkToken: String!) {
    portalLink(linkToken: $linkToken) {
      displayName
    }
  }
`);

// The token is in this page's address: no page or resource it loads may be told it (Referer).
export const metadata: Metadata = { referrer: 'no-referrer', robots: { index: false, follow: false } };

/**
 * The page of a one-time portal link (docs/portal.md, "The link opens once, when confirmed"). Reading it uses
 * nothing, so the mail and chat scanners that fetch every link leave it usable; the button POSTs the token to
 * open/confirm, which opens the session. A link that no longer opens says so at once.
 */
export default async function PortalOpenPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const linkToken = searchParam((await searchParams)['token']);
  let displayName: string | null;
  try {
    displayName = (await sendGraphql(null, PortalLinkQuery, { linkToken })).portalLink.displayName;
  } catch (error) {
    if (!(error instanceof ApiFailure)) throw error;
    return <PortalEndedNotice reason={error.error.code === 'unauthorized' ? 'link' : 'unavailable'} />;
  }
  const name = displayName ?? 'your webhook provider';
  return (
    <Container size="sm" py="xl">
      <Stack>
        <Title order={1}>Your webhook portal</Title>
        <Alert color="blue" title={`${name} invites you to manage your webhooks`}>
          <Text size="sm">
            This link opens once: the portal then stays open in this browser until the session ends. Open it here only
            if you expected it.
          </Text>
        </Alert>
        <form method="post" action={`${PORTAL_OPEN_PATH}/confirm`}>
          <input type="hidden" name="token" value={linkToken} />
          <Button type="submit" data-testid="portal-open">
            Open the portal
          </Button>
        </form>
      </Stack>
    </Container>
  );
}
