import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NextConfig } from 'next';
import { consoleBuildId } from './build-id';

// Telemetry is read lazily by the Next CLI, so setting it here covers `npx next build` run by hand too.
process.env['NEXT_TELEMETRY_DISABLED'] ??= '1';

/** Sent with every response, static files too; the Content-Security-Policy (with its nonce) comes from proxy.ts. */
const SECURITY_HEADERS = [
  { key: 'X-Content-Type-Options', value: 'nosniff' },
  { key: 'Referrer-Policy', value: 'same-origin' },
];
/**
 * For browsers that predate CSP frame-ancestors: every page but the receivers' portal, which operators may embed
 * (its frame-ancestors, from proxy.ts, names the allowed origins; docs/portal.md).
 */
const NO_FRAMING = [{ key: 'X-Frame-Options', value: 'DENY' }];

const nextConfig: NextConfig = {
  typedRoutes: false,
  poweredByHeader: false,
  reactStrictMode: true,
  experimental: { optimizePackageImports: ['@mantine/core', '@mantine/hooks', '@mantine/notifications'] },
  headers: async () => [
    { source: '/:path*', headers: SECURITY_HEADERS },
    { source: '/', headers: NO_FRAMING },
    { source: '/:path((?!portal(?:/|$)).*)', headers: NO_FRAMING },
  ],
  // The same sources give the same build ID, so `npm start` can tell whether the build it finds is current.
  generateBuildId: () => consoleBuildId(path.dirname(fileURLToPath(import.meta.url))),
  // `npm start` builds to run the console, not to check it: it skips the type check, which `npm run typecheck`
  // and `npm test` run on the console (tsc -p apps/console/tsconfig.json) and which took 40% of the build.
  typescript: { ignoreBuildErrors: process.env['SVC_CONSOLE_BUILD_FOR_START'] === '1' },
};

export default nextConfig;
