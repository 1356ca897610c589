import { PortalEndedNotice } from './ended-notice';

/** Where the portal goes when its session is over (expired, revoked, its tenant deleted) or a link does not open. */
export default async function PortalEndedPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  return <PortalEndedNotice reason={typeof params['reason'] === 'string' ? params['reason'] : undefined} />;
}
