/**
 * The cookie that holds the console session token (svc_cs_...), never the secret key: the key is traded for
 * a 12-hour session at sign-in (docs/console.md). httpOnly: page scripts never see it.
 */
export const SESSION_COOKIE = 'svc_console_session';

/** Where consoles before sessions kept the key itself; such a cookie is removed at sign-in and sign-out. */
export const LEGACY_KEY_COOKIE = 'svc_console_key';
