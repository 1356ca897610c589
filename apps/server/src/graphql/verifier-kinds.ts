import { z } from 'zod';
import { VERIFICATION_KINDS, VERIFIERS } from '@svc/core';
import type { VerifierKindInfo } from './source.types.js';

/**
 * Every verifier kind with a JSON Schema of its settings, derived from the kind's own zod schema as input (so a
 * setting with a default is optional and shows the default). Checks zod cannot express as JSON Schema, such as
 * hmac's placeholders in signed_content, still apply on createSource and updateSource.
 */
export const VERIFIER_KINDS: readonly VerifierKindInfo[] = VERIFICATION_KINDS.map((kind) => ({
  kind,
  generatesSecret: VERIFIERS[kind].generateSecret() !== null,
  settings: z.toJSONSchema(VERIFIERS[kind].settings, { io: 'input' }) as Record<string, unknown>,
}));
