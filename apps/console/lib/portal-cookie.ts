/**
 * The cookie that holds a receivers' portal session token (svc_ps_...): a separate cookie from the console's, so a
 * browser signed in to the console and holding a portal link keeps the two apart (docs/portal.md).
 */
export const PORTAL_COOKIE = 'svc_portal_session';

/** Where an ended portal session (expired, revoked, its tenant deleted) is explained. */
export const PORTAL_ENDED_PATH = '/portal/ended';

/** The page of a one-time portal link (`?token=svc_pl_...`): it shows a button, and only the button opens the link. */
export const PORTAL_OPEN_PATH = '/portal/open';
