import { readFileSync } from 'node:fs';

/** What global setup started and the tests talk to. */
export interface StackInfo {
  /** The console, e.g. http://127.0.0.1:41234 */
  consoleUrl: string;
  /** The REST and GraphQL API, e.g. http://127.0.0.1:41235 */
  apiUrl: string;
  /** The worker's team's secret key (in the stack file: the local team's, made up for this run). */
  key: string;
  /** A secret key per parallel worker, each of its own team: the local team's first. */
  keys: string[];
  /** The worker's team's name (in the stack file: the local team's). */
  teamName: string;
  /** The name of each worker's team, beside `keys`. */
  teamNames: string[];
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
