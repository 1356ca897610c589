import type { NextConfig } from 'next';

// Telemetry is read lazily by the Next CLI, so setting it here covers `npx next build` run by hand too.
process.env['NEXT_TELEMETRY_DISABLED'] ??= '1';

/** Sent with every response, static files too; the Content-Security-Policy (with its nonce) comes from proxy.ts. */
const SECURITY_HEADERS = [
  // For browsers that predate CSP frame-ancestors.
  { key: 'X-Frame-Options', value: 'DENY' },
  { key: 'X-Content-Type-Options', value: 'nosniff' },
  { key: 'Referrer-Policy', value: 'same-origin' },
];

const nextConfig: NextConfig = {
  typedRoutes: false,
  poweredByHeader: false,
  reactStrictMode: true,
  experimental: { optimizePackageImports: ['@mantine/core', '@mantine/hooks', '@mantine/notifications'] },
  headers: async () => [{ source: '/:path*', headers: SECURITY_HEADERS }],
};

export default nextConfig;
