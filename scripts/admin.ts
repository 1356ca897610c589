/**
 * Admin CLI for the installation's operator, usable while `npm start` runs; prints JSON. `help` lists the commands.
 */
import { parseArgs } from 'node:util';
import { openCore, parseUsd, readCoreConfig, systemClock, isServiceError } from '@svc/core';
import { dataDir, listTeamKeys, localSealingKey, readRuntimeInfo } from './local-runtime.js';

class UsageError extends Error {}

const COMMANDS: Record<string, { usage: string; does: string }> = {
  'team create': { usage: 'team create --name N', does: 'Create a team. Prints {"team_id"}.' },
  'team list': { usage: 'team list', does: 'List the teams. Prints [{"team_id","name"}].' },
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
    usage: 'key create --team T [--publishable] [--no-webhooks] [--spending-limit-usd D] [--environments ffe_a,ffe_b]',
    does:
      'Issue a key: secret (svc_sk_) unless --publishable (svc_pk_); --no-webhooks keeps it off the webhook API; ' +
      '--spending-limit-usd caps its month-to-date spend; --environments limits its feature-flag admin access to ' +
      'those environments of the team (default: all). Prints {"key_id","secret"}: the secret is shown once.',
  },
  'key list': {
    usage: 'key list --team T',
    does:
      'List the team\'s keys, oldest first: [{"key_id","kind","webhooks_allowed","spending_limit_usd","created_at",' +
      '"revoked_at","environment_ids"}] (environment_ids null: every environment). Never secrets (only their hashes are stored).',
  },
  'key revoke': { usage: 'key revoke --key K', does: 'Revoke a key for good: it answers 401 from now on.' },
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
    "Manages this installation's teams and keys. Finds the database through DATABASE_URL, or the running",
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

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const words = args.filter((arg) => !arg.startsWith('-'));
  if (args.length === 0) {
    process.stderr.write(helpText([]));
    process.exit(2);
  }
  if (args[0] === 'help' || args[0] === '--help' || args[0] === '-h') {
    process.stdout.write(helpText(words.filter((word) => word !== 'help')));
    return;
  }
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(helpText(words.slice(0, 2)));
    return;
  }
  const [noun, verb, ...rest] = args;
  const command = `${noun ?? ''} ${verb ?? ''}`;
  if (!(command in COMMANDS))
    throw new UsageError(`unknown command "${command.trim()}" (\`npm run --silent admin -- help\` lists them)`);
  const { values } = parseOptions(rest);
  const config = readCoreConfig(process.env, 'local');
  const databaseUrl = config.databaseUrl || readRuntimeInfo(dataDir(process.env))?.databaseUrl;
  if (!databaseUrl) throw new UsageError('no database: start the service with `npm start` first, or set DATABASE_URL');
  // The admin CLI manages teams and keys only; it never seals or opens a secret, so any key will do when
  // the local one is not there.
  const core = await openCore({
    ...config,
    databaseUrl,
    clock: systemClock,
    sealingKey: config.sealingKey ?? localSealingKey(dataDir(process.env)),
    poolSize: 2,
  });
  const { teams } = core.services;
  try {
    let output: unknown;
    switch (command) {
      case 'team create':
        output = { team_id: (await teams.createTeam(required(values.name, 'name'))).id };
        break;
      case 'team list':
        output = (await teams.listTeams()).map((t) => ({ team_id: t.id, name: t.name }));
        break;
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
      case 'key revoke':
        await teams.revokeKey(required(values.key, 'key'));
        output = { key_id: values.key, revoked: true };
        break;
      default:
        throw new UsageError(`unknown command "${command.trim()}" (\`npm run --silent admin -- help\` lists them)`);
    }
    console.log(JSON.stringify(output));
  } finally {
    await core.close();
  }
}

main().catch((error: unknown) => {
  const message =
    error instanceof UsageError || isServiceError(error) || error instanceof TypeError ? error.message : String(error);
  console.error(JSON.stringify({ error: message }));
  process.exit(error instanceof UsageError ? 2 : 1);
});
