import 'server-only';
import { API_GRAPHQL_URL } from './api-url';

/** Read once at start: where the GraphQL API lives (the console never talks to anything else) and cookie rules. */
export const consoleConfig = {
  graphqlUrl: API_GRAPHQL_URL,
  requestTimeoutMs: 15_000,
  /**
   * The session cookie is Secure unless SVC_CONSOLE_INSECURE_COOKIE=1: the one exception, for a console
   * served over plain http to a browser that refuses Secure cookies there (Chromium and Firefox accept them
   * from http://localhost and http://127.0.0.1, so local mode does not need it). See docs/console.md.
   */
  secureCookie: process.env['SVC_CONSOLE_INSECURE_COOKIE'] !== '1',
} as const;
