import { spawnSync } from 'node:child_process';

// The postgres system user: Postgres refuses to run as root, so as root it runs as `postgres`.

export const USER = 'postgres';

export interface RunAs {
  uid: number;
  gid: number;
}

/** As root: the `postgres` system user, created when missing. Otherwise null (Postgres runs as we do). */
export function postgresUser(): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  let ids = lookupUser(USER);
  if (!ids) {
    const groupExists = spawnSync('getent', ['group', USER]).status === 0;
    spawnSync(
      'useradd',
      ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', ...(groupExists ? ['-g', USER] : ['-U']), USER],
      { stdio: 'ignore' },
    );
    ids = lookupUser(USER);
  }
  if (!ids)
    throw new Error(
      'As root, Postgres must run as a `postgres` user, and none could be created: run `useradd --system -U postgres`, or run as a non-root user.',
    );
  return ids;
}

function lookupUser(name: string): RunAs | null {
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return null;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** True when the user can search (traverse) every one of the directories, as the kernel decides it (ACLs too). */
export function canTraverse(runAs: RunAs, dirs: string[]): boolean {
  const script = 'for d; do test -d "$d" && test -x "$d" || exit 1; done';
  return spawnSync('/bin/sh', ['-c', script, 'sh', ...dirs], { ...runAs, cwd: '/', stdio: 'ignore' }).status === 0;
}
