/**
 * Admin CLI for the installation's operator, usable while `npm start` runs; prints JSON. `help` lists the commands
 * (scripts/admin-cli.ts holds them).
 */
import process from 'node:process';
import { runAdmin } from './admin-cli.js';

process.exitCode = await runAdmin(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
});
