// The verifier kinds of sources (docs/sources.md, "Verifier kinds"), and the parsing of a source's `verification`
// object: `{kind, secret?, ...settings}` into validated pieces. Settings keep their API names (snake_case): they are
// stored as the JSON document the API shows, so no mapper sits between the two.
import { z } from 'zod';
import { VERIFICATION_KINDS } from '../../catalog/catalog.js';
import { invalidField } from '../../common/errors.js';
import { parseInput } from '../../common/validation.js';
import { bearerVerifier, type BearerSettings } from './bearer.verifier.js';
import { chatVerifier, type ChatSettings } from './chat.verifier.js';
import { codehostVerifier, type CodehostSettings } from './codehost.verifier.js';
import { commerceVerifier, type CommerceSettings } from './commerce.verifier.js';
import { hmacVerifier, type HmacSettings } from './hmac.verifier.js';
import { paymentsVerifier, type PaymentsSettings } from './payments.verifier.js';
import { standardWebhooksVerifier, type StandardWebhooksSettings } from './standard-webhooks.verifier.js';
import { telephonyVerifier, type TelephonySettings } from './telephony.verifier.js';
import type { Verifier, VerifierKind } from './verifier.js';

export type { InboundRequest, RejectReason, Verifier, VerifierKind, VerifierReply, VerifyResult } from './verifier.js';
export type { HmacSettings } from './hmac.verifier.js';

export interface VerifierSettings {
  standard_webhooks: StandardWebhooksSettings;
  hmac: HmacSettings;
  bearer: BearerSettings;
  payments: PaymentsSettings;
  codehost: CodehostSettings;
  commerce: CommerceSettings;
  chat: ChatSettings;
  telephony: TelephonySettings;
}

export const VERIFIERS: { [K in VerifierKind]: Verifier<VerifierSettings[K]> } = {
  standard_webhooks: standardWebhooksVerifier,
  hmac: hmacVerifier,
  bearer: bearerVerifier,
  payments: paymentsVerifier,
  codehost: codehostVerifier,
  commerce: commerceVerifier,
  chat: chatVerifier,
  telephony: telephonyVerifier,
};

/** A kind with its settings, as stored on a source. */
export type Verification = { [K in VerifierKind]: { kind: K; settings: VerifierSettings[K] } }[VerifierKind];

/** A parsed `verification` input: the kind, its settings with defaults, and the secret when one was given. */
export type VerificationInput = Verification & { secret?: string };

const FIELD = 'verification';

export function isVerifierKind(kind: string): kind is VerifierKind {
  return (VERIFICATION_KINDS as readonly string[]).includes(kind);
}

function acceptingStoredSettings<S>(verifier: Verifier<S>): Verifier<unknown> {
  return {
    ...verifier,
    verify: (request, settings, secrets, now) =>
      verifier.verify(request, verifier.settings.parse(settings), secrets, now),
  };
}

const STORED_SETTINGS_VERIFIERS: { [K in VerifierKind]: Verifier<unknown> } = {
  standard_webhooks: acceptingStoredSettings(standardWebhooksVerifier),
  hmac: acceptingStoredSettings(hmacVerifier),
  bearer: acceptingStoredSettings(bearerVerifier),
  payments: acceptingStoredSettings(paymentsVerifier),
  codehost: acceptingStoredSettings(codehostVerifier),
  commerce: acceptingStoredSettings(commerceVerifier),
  chat: acceptingStoredSettings(chatVerifier),
  telephony: acceptingStoredSettings(telephonyVerifier),
};

/**
 * The verifier of a stored kind, taking the settings as stored (JSON from the database): verify() re-validates them
 * with the kind's schema first, which also fills in defaults of settings added since the source was made. An
 * unknown kind or settings that no longer validate are a bug, and throw.
 */
export function verifierFor(kind: string): Verifier<unknown> {
  if (!isVerifierKind(kind)) throw new Error(`unknown verifier kind ${kind}`);
  return STORED_SETTINGS_VERIFIERS[kind];
}

/**
 * Parses `{kind, secret?, ...settings}` (POST /sources `verification`). Problems are 422 invalid_field naming
 * `verification.<name>`. A given secret is checked with the kind's checkSecret; whether one is required or refused
 * is the caller's decision (generateSecret() tells which kinds make their own).
 */
export function parseVerification(input: unknown): VerificationInput {
  const head = parseInput(
    z.object({
      [FIELD]: z.looseObject({
        kind: z.string(),
        secret: z.string().optional(),
      }),
    }),
    { [FIELD]: input },
  )[FIELD];
  const { kind, secret, ...settings } = head;
  if (!isVerifierKind(kind))
    throw invalidField(`${FIELD}.kind`, `${FIELD}.kind must be one of ${VERIFICATION_KINDS.join(', ')}`);
  const parsed = parseVerificationSettings(kind, settings);
  if (secret !== undefined) {
    const problem = VERIFIERS[kind].checkSecret(secret);
    if (problem !== null) throw invalidField(`${FIELD}.secret`, problem);
  }
  // The settings were parsed by this kind's schema, so the pair matches; TypeScript cannot correlate the two.
  const verification = { kind, settings: parsed } as Verification;
  return secret === undefined ? verification : { ...verification, secret };
}

/**
 * Parses the settings of a kind (no kind, no secret), as PATCH /sources gives them: every setting, with defaults
 * for those left out. Problems are 422 invalid_field naming `verification.<name>`.
 */
export function parseVerificationSettings<K extends VerifierKind>(kind: K, input: unknown): VerifierSettings[K];
export function parseVerificationSettings(kind: string, input: unknown): VerifierSettings[VerifierKind];
export function parseVerificationSettings(kind: string, input: unknown): VerifierSettings[VerifierKind] {
  if (!isVerifierKind(kind)) throw new Error(`unknown verifier kind ${kind}`);
  const schema: z.ZodType<VerifierSettings[VerifierKind]> = VERIFIERS[kind].settings;
  return parseInput(z.object({ [FIELD]: schema }), { [FIELD]: input })[FIELD];
}
