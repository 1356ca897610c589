/** Where the GraphQL API lives (SVC_API_URL), read once; the proxy (proxy.ts) and the server code share it. */
export const API_GRAPHQL_URL = `${(process.env['SVC_API_URL'] ?? 'http://127.0.0.1:8080').replace(/\/+$/, '')}/graphql`;
