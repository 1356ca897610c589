import type { NextConfig } from 'next';

// Telemetry is read lazily by the Next CLI, so setting it here covers `npx next build` run by hand too.
process.env['NEXT_TELEMETRY_DISABLED'] ??= '1';

const nextConfig: NextConfig = {
  typedRoutes: false,
  poweredByHeader: false,
  reactStrictMode: true,
  experimental: { optimizePackageImports: ['@mantine/core', '@mantine/hooks', '@mantine/notifications'] },
};

export default nextConfig;
