/**
 * The admin CLI's commands (scripts/admin.ts is the program): `runAdmin` takes the arguments, the environment and
 * where to write, and returns the exit code, so tests run the commands without a process per command.
 */
import { parseArgs } from 'node:util';
import { openCore, parseUsd, readCoreConfig, systemClock, isServiceError, ServiceError } from '@svc/core';
import { dataDir, listTeamKeys, localSealingKey, readRuntimeInfo } from './local-runtime.js';

class UsageError extends Error {}

const COMMANDS: Record<string, { usage: string; does: string }> = {
  'team create': {
    usage: 'team create --name N [--no-card] [--allow-duplicate]',
    does:
      'Create a team. It has a payment card on file unless --no-card (without one, charged work answers 402 ' +
      'billing_required; `team billing` changes it). A name another team has is refused unless --allow-duplicate. ' +
      'Prints {"team_id","name","payment_card"}.',
  },
  'team list': {
    usage: 'team list',
    does:
      'List the teams, oldest first: [{"team_id","name","suspended","webhooks_suspended","payment_card",' +
      '"active_keys","created_at"}] (active_keys: keys not revoked, including keys in a rotation\'s overlap).',
  },
  'team rename': {
    usage: 'team rename --team T --name N [--allow-duplicate]',
    does: 'Rename a team; a name another team has is refused unless --allow-duplicate.',
  },
  'team delete': {
    usage: 'team delete --team T',
    does:
      'Delete a team that holds no data: only its keys, console sessions and rate-limit buckets go with it. A team ' +
      'with anything else (tenants, event types, sources, messages, charges, feature flags, ...) is refused, ' +
      'naming what it holds: suspend it instead. Prints {"team_id","deleted","keys_deleted"}.',
  },
  'team suspend': {
    usage: 'team suspend --team T [--webhooks-only]',
    does: 'Suspend a team: its keys answer 403. --webhooks-only suspends only sending webhooks.',
  },
  'team unsuspend': { usage: 'team unsuspend --team T', does: 'Lift a suspension of either kind.' },
  'team billing': {
    usage: 'team billing --team T --card on|off',
    does: 'Record whether the team has a payment card on file (without one, charged work answers 402 billing_required).',
  },
  'key create': {
    usage:
      'key create --team T [--label L] [--publishable] [--no-webhooks] [--spending-limit-usd D] [--environments ffe_a,ffe_b]',
    does:
      'Issue a key: secret (svc_sk_) unless --publishable (svc_pk_); --label names it in key lists and usage ' +
      'reports (1 to 100 characters); --no-webhooks keeps it off the webhook API; ' +
      '--spending-limit-usd caps its month-to-date spend; --environments limits its feature-flag admin access to ' +
      'those environments of the team (default: all). Prints {"key_id","secret"}: the secret is shown once.',
  },
  'key list': {
    usage: 'key list --team T',
    does:
      'List the team\'s keys, oldest first: [{"key_id","label","kind","webhooks_allowed","spending_limit_usd",' +
      '"created_at","revoked_at","environment_ids"}] (environment_ids null: every environment; a revoked_at still ' +
      "to come: the key works until then, a rotation's overlap). Never secrets (only their hashes are stored).",
  },
  'key label': {
    usage: 'key label --key K (--label L | --clear)',
    does: "Set or clear a key's label.",
  },
  'key rotate': {
    usage: 'key rotate --key K [--overlap-minutes M]',
    does:
      'Issue a new secret for a key: a new key with the same team, kind, webhook access, spending limit, ' +
      'environments and label, which also takes over the sources the old key paid for. The old key is revoked now, ' +
      "or after M minutes (at most 30 days) during which both work. The new key's month-to-date spend starts at 0. " +
      'Prints {"key_id","secret","replaced_key_id","replaced_key_revoked_at","sources_moved"}: the secret is shown once.',
  },
  'key revoke': {
    usage: 'key revoke --key K',
    does:
      "Revoke a key for good (also one in a rotation's overlap): it answers 401 from now on. Prints " +
      '{"key_id","revoked","revoked_at"}; a key revoked before is left as it was, with "already_revoked": true and ' +
      'a note on stderr.',
  },
  'session list': {
    usage: 'session list --team T',
    does:
      'List the team\'s console sessions, newest first: [{"session_id","key_id","created_at","last_seen_at",' +
      '"expires_at","revoked_at","live"}]. Never tokens (only their hashes are stored).',
  },
  'session revoke': {
    usage: 'session revoke (--session S | --team T)',
    does:
      'Sign a console session out (--session), or every live session of a team (--team). Prints ' +
      '{"session_id","revoked","revoked_at"} (with "already_revoked" as for keys) or {"team_id","sessions_revoked"}.',
  },
  help: { usage: 'help [command]', does: 'This text, or the part about one command (also: <command> --help).' },
};

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}

/** The help text: every command, or those starting with the words given ("key", "key create"). */
function helpText(words: string[]): string {
  const prefix = words.join(' ');
  const matching = Object.entries(COMMANDS).filter(
    ([name]) => !prefix || name === prefix || name.startsWith(`${prefix} `),
  );
  const entries = matching.length ? matching : Object.entries(COMMANDS);
  return [
    'Usage: npm run --silent admin -- <command> [options]',
    '',
    "Manages this installation's teams, keys and console sessions. Finds the database through DATABASE_URL, or the running",
    '`npm start` (.data/runtime.json, or SVC_DATA_DIR). Prints JSON; an error prints {"error"} on stderr and exits',
    'non-zero (2 for bad usage).',
    '',
    'Commands:',
    ...entries.flatMap(([, command]) => [
      `  ${command.usage}`,
      ...wrap(command.does, 104).map((line) => `      ${line}`),
    ]),
    '',
  ].join('\n');
}

function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${flag} is required`);
  return value;
}

function parseOptions(args: string[]) {
  try {
    return parseArgs({
      args,
      options: {
        name: { type: 'string' },
        team: { type: 'string' },
        key: { type: 'string' },
        session: { type: 'string' },
        label: { type: 'string' },
        clear: { type: 'boolean' },
        'no-card': { type: 'boolean' },
        'allow-duplicate': { type: 'boolean' },
        'overlap-minutes': { type: 'string' },
        card: { type: 'string' },
        publishable: { type: 'boolean' },
        'no-webhooks': { type: 'boolean' },
        'webhooks-only': { type: 'boolean' },
        'spending-limit-usd': { type: 'string' },
        environments: { type: 'string' },
      },
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** What a run of the CLI reads and where it writes. */
export interface AdminIo {
  env: NodeJS.ProcessEnv;
  /** Standard output: the JSON answer, or help. */
  out: (text: string) => void;
  /** Standard error: errors as JSON, and notes such as "already revoked". */
  err: (text: string) => void;
}

/** Runs one command; the exit code is 0, 1 for a refusal or failure, 2 for bad usage. */
export async function runAdmin(args: readonly string[], io: AdminIo): Promise<number> {
  try {
    return await runCommand(args, io);
  } catch (error) {
    const message =
      error instanceof UsageError || isServiceError(error) || error instanceof TypeError
        ? error.message
        : String(error);
    io.err(`${JSON.stringify({ error: message })}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}

async function runCommand(args: readonly string[], io: AdminIo): Promise<number> {
  const words = args.filter((arg) => !arg.startsWith('-'));
  if (args.length === 0) {
    io.err(helpText([]));
    return 2;
  }
  if (args[0] === 'help' || args[0] === '--help' || args[0] === '-h') {
    io.out(helpText(words.filter((word) => word !== 'help')));
    return 0;
  }
  if (args.includes('--help') || args.includes('-h')) {
    io.out(helpText(words.slice(0, 2)));
    return 0;
  }
  const [noun, verb, ...rest] = args;
  const command = `${noun ?? ''} ${verb ?? ''}`;
  if (!(command in COMMANDS))
    throw new UsageError(`unknown command "${command.trim()}" (\`npm run --silent admin -- help\` lists them)`);
  const { values } = parseOptions(rest);
  const config = readCoreConfig(io.env, 'local');
  const databaseUrl = config.databaseUrl || readRuntimeInfo(dataDir(io.env))?.databaseUrl;
  if (!databaseUrl) throw new UsageError('no database: start the service with `npm start` first, or set DATABASE_URL');
  // The admin CLI manages teams and keys only; it never seals or opens a secret, so any key will do when
  // the local one is not there.
  const core = await openCore({
    ...config,
    databaseUrl,
    clock: systemClock,
    sealingKey: config.sealingKey ?? localSealingKey(dataDir(io.env)),
    // Nor does it check the key or record the database's first check value (docs/upgrading.md).
    checkSealingKey: false,
    poolSize: 2,
  });
  const { teams, consoleSessions } = core.services;
  try {
    let output: unknown;
    switch (command) {
      case 'team create': {
        const team = await withDuplicateHint(
          teams.createTeam(required(values.name, 'name'), {
            paymentCard: !values['no-card'],
            uniqueName: !values['allow-duplicate'],
          }),
        );
        output = { team_id: team.id, name: team.name, payment_card: team.hasPaymentCard };
        break;
      }
      case 'team list':
        output = (await teams.listTeamSummaries()).map((t) => ({
          team_id: t.id,
          name: t.name,
          suspended: t.suspended,
          webhooks_suspended: t.webhooksSuspended,
          payment_card: t.hasPaymentCard,
          active_keys: t.activeKeys,
          created_at: t.createdAt.toISOString(),
        }));
        break;
      case 'team rename': {
        const team = await withDuplicateHint(
          teams.renameTeam(required(values.team, 'team'), required(values.name, 'name'), {
            uniqueName: !values['allow-duplicate'],
          }),
        );
        output = { team_id: team.id, name: team.name };
        break;
      }
      case 'team delete': {
        const { keysDeleted } = await teams.deleteTeam(required(values.team, 'team'));
        output = { team_id: values.team, deleted: true, keys_deleted: keysDeleted };
        break;
      }
      case 'team suspend':
        await teams.setSuspension(
          required(values.team, 'team'),
          values['webhooks-only']
            ? { suspended: false, webhooksSuspended: true }
            : { suspended: true, webhooksSuspended: false },
        );
        output = {
          team_id: values.team,
          suspended: !values['webhooks-only'],
          webhooks_suspended: Boolean(values['webhooks-only']),
        };
        break;
      case 'team unsuspend':
        await teams.setSuspension(required(values.team, 'team'), { suspended: false, webhooksSuspended: false });
        output = { team_id: values.team, suspended: false, webhooks_suspended: false };
        break;
      case 'team billing': {
        const card = required(values.card, 'card');
        if (card !== 'on' && card !== 'off') throw new UsageError('--card must be on or off');
        await teams.setPaymentCard(required(values.team, 'team'), card === 'on');
        output = { team_id: values.team, payment_card: card === 'on' };
        break;
      }
      case 'key create': {
        const limitText = values['spending-limit-usd'];
        const limit = limitText === undefined ? null : parseUsd(limitText);
        if (limitText !== undefined && limit === null)
          throw new UsageError('--spending-limit-usd must be a decimal USD amount');
        const issued = await teams.createKey(required(values.team, 'team'), {
          label: values.label ?? null,
          kind: values.publishable ? 'publishable' : 'secret',
          webhooksAllowed: !values['no-webhooks'],
          spendingLimitMicros: limit,
          environmentIds:
            values.environments === undefined
              ? null
              : values.environments
                  .split(',')
                  .map((id) => id.trim())
                  .filter(Boolean),
        });
        output = {
          key_id: issued.keyId,
          secret: issued.secret,
          ...(issued.environmentIds ? { environment_ids: issued.environmentIds } : {}),
        };
        break;
      }
      case 'key list':
        output = await listTeamKeys(core.services, required(values.team, 'team'));
        break;
      case 'key label': {
        if ((values.label === undefined) === !values.clear) throw new UsageError('give --label L or --clear');
        await teams.setKeyLabel(required(values.key, 'key'), values.clear ? null : values.label!);
        output = { key_id: values.key, label: values.clear ? null : values.label };
        break;
      }
      case 'key rotate': {
        const minutesText = values['overlap-minutes'] ?? '0';
        if (!/^[0-9]{1,6}$/.test(minutesText)) throw new UsageError('--overlap-minutes must be a whole number');
        const rotated = await teams.rotateKey(required(values.key, 'key'), Number(minutesText) * 60_000);
        output = {
          key_id: rotated.keyId,
          secret: rotated.secret,
          replaced_key_id: rotated.replacedKeyId,
          replaced_key_revoked_at: rotated.replacedKeyRevokedAt.toISOString(),
          sources_moved: rotated.sourcesMoved,
        };
        break;
      }
      case 'key revoke': {
        const { revokedAt, alreadyRevoked } = await teams.revokeKey(required(values.key, 'key'));
        if (alreadyRevoked)
          io.err(`key ${values.key} was already revoked at ${revokedAt.toISOString()}; nothing changed\n`);
        output = {
          key_id: values.key,
          revoked: true,
          revoked_at: revokedAt.toISOString(),
          ...(alreadyRevoked ? { already_revoked: true } : {}),
        };
        break;
      }
      case 'session list': {
        const teamId = required(values.team, 'team');
        await teams.getTeam(teamId);
        const now = Date.now();
        output = (await consoleSessions.listTeamSessions(teamId)).map((session) => ({
          session_id: session.id,
          key_id: session.keyId,
          created_at: session.createdAt.toISOString(),
          last_seen_at: session.lastSeenAt.toISOString(),
          expires_at: session.expiresAt.toISOString(),
          revoked_at: session.revokedAt?.toISOString() ?? null,
          live: session.revokedAt === null && session.expiresAt.getTime() > now,
        }));
        break;
      }
      case 'session revoke': {
        if ((values.session === undefined) === (values.team === undefined))
          throw new UsageError('give --session S or --team T');
        if (values.team !== undefined) {
          await teams.getTeam(values.team);
          output = { team_id: values.team, sessions_revoked: await consoleSessions.revokeTeamSessions(values.team) };
          break;
        }
        const { revokedAt, alreadyRevoked } = await consoleSessions.revokeSessionById(
          required(values.session, 'session'),
        );
        if (alreadyRevoked)
          io.err(`session ${values.session} was already revoked at ${revokedAt.toISOString()}; nothing changed\n`);
        output = {
          session_id: values.session,
          revoked: true,
          revoked_at: revokedAt.toISOString(),
          ...(alreadyRevoked ? { already_revoked: true } : {}),
        };
        break;
      }
      default:
        throw new UsageError(`unknown command "${command.trim()}" (\`npm run --silent admin -- help\` lists them)`);
    }
    io.out(`${JSON.stringify(output)}\n`);
    return 0;
  } finally {
    await core.close();
  }
}

/** A duplicate team name's refusal says how to create it anyway. */
async function withDuplicateHint<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (isServiceError(error) && error.code === 'resource_in_use' && error.details.field === 'name')
      throw new ServiceError(error.code, `${error.message}: pick another name, or pass --allow-duplicate`);
    throw error;
  }
}
