/**
 * Admin CLI for the installation's operator, usable while `npm start` runs; prints JSON.
 *   team create --name N | team list | team suspend --team T [--webhooks-only] | team unsuspend --team T
 *   team billing --team T --card on|off
 *   key create --team T [--publishable] [--no-webhooks] [--spending-limit-usd D] | key revoke --key K
 */
import { parseArgs } from 'node:util';
import { openCore, parseUsd, readCoreConfig, systemClock, isServiceError } from '@svc/core';
import { dataDir, localSealingKey, readRuntimeInfo } from './local-runtime.js';

class UsageError extends Error {}

function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${flag} is required`);
  return value;
}

async function main(): Promise<void> {
  const [noun, verb, ...rest] = process.argv.slice(2);
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      team: { type: 'string' },
      key: { type: 'string' },
      card: { type: 'string' },
      publishable: { type: 'boolean' },
      'no-webhooks': { type: 'boolean' },
      'webhooks-only': { type: 'boolean' },
      'spending-limit-usd': { type: 'string' },
    },
    strict: true,
  });
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
    const command = `${noun ?? ''} ${verb ?? ''}`;
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
        });
        output = { key_id: issued.keyId, secret: issued.secret };
        break;
      }
      case 'key revoke':
        await teams.revokeKey(required(values.key, 'key'));
        output = { key_id: values.key, revoked: true };
        break;
      default:
        throw new UsageError(`unknown command "${command.trim()}"`);
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
