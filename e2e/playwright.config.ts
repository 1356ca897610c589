import { defineConfig } from '@playwright/test';

/** Debian's Chromium: Playwright's own browser download cannot work on our machines (DESIGN.md). */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export default defineConfig({
  testDir: './tests',
  outputDir: './test-results',
  globalSetup: './global-setup.ts',
  globalTeardown: './global-teardown.ts',
  // One stack, a team per worker (global setup makes them): two workers side by side, each taking whole files, its
  // tests one after another so its team's lists and settings stay predictable. Most of a test's time is waiting
  // (deliveries, retries, rollups), which the other worker fills; one worker took about 7 minutes.
  workers: 2,
  fullyParallel: false,
  retries: 0,
  forbidOnly: true,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: { executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS },
    // Every test's last screen with E2E_SNAPSHOTS=1 (beside the steps snap() saves); else only a failed test's.
    screenshot: process.env['E2E_SNAPSHOTS'] === '1' ? 'on' : 'only-on-failure',
    // Recording a trace cost about 1.5 s of a 4.5 s test on 2 cores, and CI keeps no artifacts: E2E_TRACE=1 records
    // one for each test and keeps those that failed (npx playwright show-trace <zip>).
    trace: process.env.E2E_TRACE === '1' ? 'retain-on-failure' : 'off',
    actionTimeout: 15_000,
    navigationTimeout: 30_000,
    viewport: { width: 1366, height: 900 },
    // The console respects it (app/theme.ts): modals open and close at once, with no animation frames to wait for.
    reducedMotion: 'reduce',
  },
});
