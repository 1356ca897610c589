// @ts-check
/**
 * The guard of `npm start`'s children: stops them when the process that started them is gone, however it went
 * (kill -9 included), so that neither Postgres nor the console outlives it.
 *
 * scripts/start.ts runs this file with plain node, in a session of its own (a Ctrl-C or a signal to the start's
 * process group does not reach it), and writes one JSON line to its stdin for each child it starts:
 * {"name":"Postgres","pid":123,"startTime":"4567","signal":"SIGINT"}. Nothing else holds that pipe, so its end of
 * file means the start process has exited: the guard sends each child still running (the same process: its start
 * time in /proc still matches, so a reused PID is left alone) its stop signal, waits for them, and SIGKILLs what is
 * left after 15 s. A child with "group":true (the console build, which runs `next build` and its workers in a
 * process group of its own) gets the signals as a group, and runs while any process of its group does. After a
 * clean stop the children are gone already and the guard exits at once.
 * Plain JavaScript on purpose: it starts in a few milliseconds and needs nothing compiled.
 */
import { readdirSync, readFileSync } from 'node:fs';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';

const KILL_AFTER_MS = 15_000;

/**
 * The start time of a process (field 22 of /proc/PID/stat, clock ticks since boot), "" where /proc is missing, or
 * null when no such process runs (or only its zombie). scripts/stack-processes.ts reads it the same way.
 * @param {number} pid
 * @returns {string | null}
 */
function startTime(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // A zombie (Z) has exited; only its parent's wait is missing.
    return /^[ZX]$/.test(fields[0] ?? '') ? null : (fields[19] ?? null);
  } catch {
    try {
      process.kill(pid, 0);
      return process.platform === 'linux' ? null : '';
    } catch {
      return null;
    }
  }
}

/**
 * True while a process of the group runs that started no earlier than its leader (a group's ID is not reused while a
 * member lives). scripts/stack-processes.ts (childRunning) reads it the same way.
 * @param {number} pgid
 * @param {string} leaderStart
 */
function groupRuns(pgid, leaderStart) {
  let pids;
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return false;
  }
  return pids.some((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return !/^[ZX]$/.test(fields[0] ?? '') && fields[2] === String(pgid) && Number(fields[19]) >= Number(leaderStart);
    } catch {
      return false;
    }
  });
}

/** @typedef {{ name: string, pid: number, startTime: string, signal: NodeJS.Signals, group?: boolean }} Child */
/** @type {Child[]} */
const children = [];
const running = (/** @type {Child} */ child) =>
  startTime(child.pid) === child.startTime || (child.group === true && groupRuns(child.pid, child.startTime));
/** @param {Child} child @param {NodeJS.Signals} signal */
function send(child, signal) {
  try {
    process.kill(child.group ? -child.pid : child.pid, signal);
  } catch {
    // gone meanwhile
  }
}

let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  const lines = buffered.split('\n');
  buffered = lines.pop() ?? '';
  for (const line of lines) if (line.trim()) children.push(JSON.parse(line));
});
process.stdin.on('end', () => void stopChildren());
// Signals meant for the start process do not stop the guard before it has done its job.
for (const signal of /** @type {const} */ (['SIGINT', 'SIGHUP'])) process.on(signal, () => undefined);

async function stopChildren() {
  const left = children.filter(running);
  for (const child of left) send(child, child.signal);
  const deadline = Date.now() + KILL_AFTER_MS;
  while (left.some(running) && Date.now() < deadline) await sleep(100);
  for (const child of left.filter(running)) send(child, 'SIGKILL');
  process.exit(0);
}
