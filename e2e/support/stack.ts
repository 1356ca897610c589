import { readFileSync } from 'node:fs';

/** What global setup started and the tests talk to. */
export interface StackInfo {
  /** The console, e.g. http://127.0.0.1:41234 */
  consoleUrl: string;
  /** The REST and GraphQL API, e.g. http://127.0.0.1:41235 */
  apiUrl: string;
  /** The local team's secret key, made up for this run. */
  key: string;
  /** The process group of `scripts/start.ts`. */
  pid: number;
  tempDir: string;
  logFile: string;
}

/** Global setup writes the stack file and names it in this variable; workers inherit it. */
export const STACK_FILE_ENV = 'SVC_E2E_STACK_FILE';

export function readStackInfo(): StackInfo {
  const file = process.env[STACK_FILE_ENV];
  if (!file)
    throw new Error(
      `${STACK_FILE_ENV} is not set: run the tests through e2e/playwright.config.ts so global setup starts the stack`,
    );
  return JSON.parse(readFileSync(file, 'utf8')) as StackInfo;
}
