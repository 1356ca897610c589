import 'server-only';

/** Read once: where the GraphQL API lives. The console never talks to anything else. */
export const consoleConfig = {
  graphqlUrl: `${(process.env['SVC_API_URL'] ?? 'http://127.0.0.1:8080').replace(/\/+$/, '')}/graphql`,
  requestTimeoutMs: 15_000,
} as const;
