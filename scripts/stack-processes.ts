/**
 * The processes of `npm start`: none outlives the process that started it, and a start after any crash recovers
 * by itself.
 *
 * - Children (Postgres, the console) run in sessions of their own, so that a Ctrl-C reaches only the start process,
 *   which stops them in order (console, worker, server, Postgres last) instead of Postgres ending connections under
 *   the worker's feet. A guard process (scripts/stack-guard.js) stops them when the start process is gone, even
 *   after kill -9.
 * - The start process stops when what launched it is gone: its parent, and the ancestors in its process group (the
 *   job a shell started: `npm start` is npm, sh and tsx above it), checked twice a second.
 * - processes.json in the data directory records the start process and its children (PID and start time). The next
 *   start stops children of a start that is no longer running, and whatever Postgres still runs on the data
 *   directory without a running start, before it begins.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { readRuntimeInfo, ROOT } from './local-runtime.js';

/** A process as it was when recorded: the start time tells it apart from a later process given the same PID. */
export interface ProcessIdentity {
  pid: number;
  /** Field 22 of /proc/PID/stat (clock ticks since boot); "" where there is no /proc. */
  startTime: string;
}

export interface StackChild extends ProcessIdentity {
  name: string;
  /** What stops it cleanly: SIGINT is Postgres' fast shutdown. */
  signal: NodeJS.Signals;
  /**
   * The child leads a process group of its own (the console build: `next build` and its workers), and the signal
   * goes to the whole group; it counts as running while any process of the group does.
   */
  group?: boolean;
}

interface ProcessesFile {
  starter: ProcessIdentity;
  children: StackChild[];
}

const PROCESSES_FILE = 'processes.json';
const LAUNCHER_CHECK_MS = 500;
const STOP_WAIT_MS = 15_000;

/** The fields of /proc/PID/stat after the command name (field 3 onwards), or null when unreadable. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: count fields after its closing parenthesis.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function signalsReach(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The identity of a running process, or null. scripts/stack-guard.js reads /proc the same way. */
export function processIdentity(pid: number): ProcessIdentity | null {
  const fields = statFields(pid);
  // A zombie (Z) has exited; only its parent's wait is missing.
  if (fields) return /^[ZX]$/.test(fields[0] ?? '') ? null : { pid, startTime: fields[19] ?? '' };
  return process.platform !== 'linux' && signalsReach(pid) ? { pid, startTime: '' } : null;
}

export function isRunning(identity: ProcessIdentity): boolean {
  return processIdentity(identity.pid)?.startTime === identity.startTime;
}

/**
 * True while a child, or for a group leader any process of its group, still runs. A group's ID is not given to a new
 * process while a member lives on, and members started before the leader are not its (scripts/stack-guard.js reads
 * /proc the same way).
 */
export function childRunning(child: StackChild): boolean {
  if (isRunning(child)) return true;
  if (!child.group) return false;
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    const fields = statFields(Number(name));
    if (
      fields &&
      !/^[ZX]$/.test(fields[0] ?? '') &&
      fields[2] === String(child.pid) &&
      Number(fields[19]) >= Number(child.startTime)
    )
      return true;
  }
  return false;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

function readProcessesFile(dir: string): ProcessesFile | null {
  try {
    return JSON.parse(readFileSync(path.join(dir, PROCESSES_FILE), 'utf8')) as ProcessesFile;
  } catch {
    return null;
  }
}

/** Sends the signal to each process still running, waits for them to exit, and SIGKILLs what is left after 15 s. */
export async function stopProcesses(processes: StackChild[]): Promise<void> {
  const signal = (child: StackChild, name: NodeJS.Signals) => {
    try {
      process.kill(child.group ? -child.pid : child.pid, name);
    } catch {
      // gone meanwhile
    }
  };
  const left = processes.filter(childRunning);
  for (const child of left) signal(child, child.signal);
  const deadline = Date.now() + STOP_WAIT_MS;
  while (left.some(childRunning) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  for (const child of left.filter(childRunning)) signal(child, 'SIGKILL');
}

/**
 * Makes the data directory ours: returns the PID of a running start that uses it (the caller refuses to start), or
 * stops what an earlier start left running (told in one line each) and returns null. A postmaster.pid whose
 * process is gone is removed.
 */
export async function reclaimDataDir(dir: string): Promise<number | null> {
  const recorded = readProcessesFile(dir);
  if (recorded && recorded.starter.pid !== process.pid && isRunning(recorded.starter)) return recorded.starter.pid;
  // A start of a version before processes.json said so in runtime.json only.
  const earlier = readRuntimeInfo(dir)?.pid;
  if (earlier && earlier !== process.pid && /scripts[/\\]start/.test(commandLine(earlier))) return earlier;
  const orphans = (recorded?.children ?? []).filter(childRunning);
  const pidFile = path.join(dir, 'pg', 'postmaster.pid');
  const postmaster = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : NaN;
  const postmasterIdentity = Number.isInteger(postmaster) && postmaster > 0 ? processIdentity(postmaster) : null;
  // No start runs on this directory, so a Postgres on it is one that an earlier start left behind (killed before it
  // could stop it, or a version without the guard).
  if (
    postmasterIdentity &&
    /postgres/.test(commandLine(postmaster) || 'postgres') &&
    !orphans.some((child) => child.pid === postmaster)
  )
    orphans.push({ ...postmasterIdentity, name: 'Postgres', signal: 'SIGINT' });
  for (const orphan of orphans)
    console.warn(`Stopping ${orphan.name} (process ${orphan.pid}), left running by an earlier start`);
  await stopProcesses(orphans);
  if (existsSync(pidFile) && !(postmasterIdentity && isRunning(postmasterIdentity))) rmSync(pidFile, { force: true });
  return null;
}

/** The PIDs of the processes listening on a TCP port (Linux /proc; none elsewhere). */
function listenersOn(port: number): number[] {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let rows: string[];
    try {
      rows = readFileSync(table, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const row of rows) {
      const [, local, , state, , , , , , inode] = row.trim().split(/\s+/);
      // 0A: LISTEN.
      if (state === '0A' && local?.endsWith(`:${hexPort}`) && inode) inodes.add(`socket:[${inode}]`);
    }
  }
  if (inodes.size === 0) return [];
  const pids: number[] = [];
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (readdirSync(`/proc/${name}/fd`).some((fd) => inodes.has(readlinkSync(`/proc/${name}/fd/${fd}`))))
        pids.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

/** A process of `command` running in `consoleDir` whose parent is not a running start: one an earlier start left. */
function orphanIn(pid: number, consoleDir: string, command: RegExp): ProcessIdentity | null {
  const identity = processIdentity(pid);
  const parent = Number(statFields(pid)?.[1]);
  let cwd = '';
  try {
    cwd = realpathSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
  return identity &&
    command.test(commandLine(pid)) &&
    cwd === realpathSync(consoleDir) &&
    !/scripts[/\\]start/.test(commandLine(parent))
    ? identity
    : null;
}

async function stopOrphans(orphans: StackChild[]): Promise<boolean> {
  for (const orphan of orphans)
    console.warn(`Stopping ${orphan.name} (process ${orphan.pid}), left running by an earlier start`);
  await stopProcesses(orphans);
  return orphans.length > 0;
}

/**
 * Stops a console that an earlier start of this checkout left listening on the port (a version before the guard,
 * killed hard): a `next-server` running in `consoleDir` whose parent is no longer a start. Returns true when it
 * stopped one.
 */
export async function stopOrphanConsole(port: number, consoleDir: string): Promise<boolean> {
  const orphans = listenersOn(port).flatMap((pid) => {
    const identity = orphanIn(pid, consoleDir, /^next-server/);
    return identity ? [{ ...identity, name: 'the console', signal: 'SIGTERM' as const }] : [];
  });
  return stopOrphans(orphans);
}

/**
 * Stops a `next build` of this checkout's console that no running start owns (left by a start whose guard could
 * not stop it, or a version before builds ran in a group of their own): with it running, the next build would
 * refuse ("Another next build process is already running"). Its workers go with it.
 */
export async function stopOrphanBuild(consoleDir: string): Promise<boolean> {
  const orphans: StackChild[] = [];
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    const identity = orphanIn(Number(name), consoleDir, /^next-build|next[/\\]dist[/\\]bin[/\\]next build/);
    if (!identity) continue;
    // A build started by a start of this version leads its own group: its workers are stopped with it.
    const group = statFields(identity.pid)?.[2] === String(identity.pid);
    orphans.push({ ...identity, name: 'the console build', signal: 'SIGTERM', group });
  }
  return stopOrphans(orphans);
}

/** The guard and the record of this start's children; `track` each child as soon as it is spawned. */
export interface StackGuard {
  /**
   * Nothing to track when the child has exited already (its own exit or error event tells the caller). `group`: the
   * child was spawned detached, and its whole process group is stopped.
   */
  track(child: ChildProcess, name: string, signal: NodeJS.Signals, options?: { group?: boolean }): void;
  /** Closes the guard's pipe: it stops whatever of the children still runs, then exits. */
  close(): void;
}

export function startGuard(dir: string): StackGuard {
  const starter = processIdentity(process.pid) ?? { pid: process.pid, startTime: '' };
  const children: StackChild[] = [];
  const save = () => {
    mkdirSync(dir, { recursive: true });
    const record: ProcessesFile = { starter, children };
    writeFileSync(path.join(dir, PROCESSES_FILE), JSON.stringify(record, null, 2), { mode: 0o600 });
  };
  let closed = false;
  let guard: ChildProcess;
  const spawnGuard = () => {
    guard = spawn(process.execPath, [path.join(ROOT, 'scripts/stack-guard.js')], {
      detached: true,
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    guard.unref();
    // The pipe must not keep this process alive either; its end is the guard's signal.
    (guard.stdin as unknown as { unref?: () => void }).unref?.();
    guard.stdin!.on('error', () => undefined);
    for (const child of children) guard.stdin!.write(`${JSON.stringify(child)}\n`);
    // A guard that was killed is replaced, told about the children that are still running.
    guard.once('exit', () => {
      if (!closed) spawnGuard();
    });
  };
  save();
  spawnGuard();
  return {
    track(child, name, signal, options = {}) {
      const identity = child.pid === undefined ? null : processIdentity(child.pid);
      if (!identity) return;
      const record: StackChild = { ...identity, name, signal, ...(options.group ? { group: true } : {}) };
      children.push(record);
      save();
      guard.stdin!.write(`${JSON.stringify(record)}\n`);
    },
    close() {
      closed = true;
      guard.stdin!.end();
    },
  };
}

/**
 * Calls `onGone` once when the process that launched this one is gone: the parent, or an ancestor in the same process
 * group (the job a shell started, e.g. npm and sh above tsx), never init. Processes outside the group (the shell
 * itself, a `disown`) are not watched.
 */
export function watchLaunchers(onGone: (launcher: ProcessIdentity & { command: string }) => void): void {
  const ownGroup = statFields(process.pid)?.[2];
  const launchers: Array<ProcessIdentity & { command: string }> = [];
  for (let pid = process.ppid; pid > 1 && launchers.length < 8;) {
    const identity = processIdentity(pid);
    if (!identity) break;
    launchers.push({ ...identity, command: commandLine(pid).trim() || `process ${pid}` });
    const fields = statFields(pid);
    const parent = Number(fields?.[1]);
    if (!fields || !(parent > 1) || statFields(parent)?.[2] !== ownGroup) break;
    pid = parent;
  }
  const timer = setInterval(() => {
    const gone = launchers.find((launcher) => !isRunning(launcher));
    if (!gone) return;
    clearInterval(timer);
    onGone(gone);
  }, LAUNCHER_CHECK_MS);
  timer.unref();
}
