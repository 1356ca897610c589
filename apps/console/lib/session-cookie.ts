/** The cookie that holds the secret key. httpOnly: page scripts never see it. */
export const SESSION_COOKIE = 'svc_console_key';
