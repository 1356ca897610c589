import { z } from 'zod';
import { JSON_POINTER_PATTERN } from '@svc/json';
import { idOf, metadataSchema } from '../common/validation.js';

/** A JSON Pointer (RFC 6901) into the captured body: "" or "/a/b~1c". */
const jsonPointer = z.string().max(512).regex(JSON_POINTER_PATTERN, 'must be a JSON Pointer such as /type');

/**
 * The event type mapping: a fixed event_type, or event_type_path (a JSON Pointer into the captured body, or the
 * form field of that name for form-encoded bodies) with an optional event_type_prefix.
 */
const mapping = {
  event_type: z.string().min(1).max(256).nullable().optional(),
  event_type_path: jsonPointer.nullable().optional(),
  event_type_prefix: z.string().min(1).max(128).nullable().optional(),
};

/**
 * POST /sources. `verification` is `{kind, secret?, ...settings}`: its kind's settings and, for kinds whose
 * provider issues the secret, the secret (write-only). standard_webhooks and bearer generate theirs.
 */
export const CreateSourceInput = z.strictObject({
  tenant_id: idOf('tenant'),
  name: z.string().min(1).max(256),
  verification: z.record(z.string(), z.unknown()),
  ...mapping,
  billing_key_id: idOf('key').optional(),
  metadata: metadataSchema.default({}),
});
export type CreateSourceInput = z.output<typeof CreateSourceInput>;

/**
 * PATCH /sources/{id}: name, verification settings (not the kind, not the secret: rotate_secret changes it), the
 * event type mapping, the billing key, status (active or paused) and metadata.
 */
export const UpdateSourceInput = z.strictObject({
  name: z.string().min(1).max(256).optional(),
  verification: z.record(z.string(), z.unknown()).optional(),
  ...mapping,
  billing_key_id: idOf('key').optional(),
  status: z.enum(['active', 'paused']).optional(),
  metadata: metadataSchema.optional(),
});
export type UpdateSourceInput = z.output<typeof UpdateSourceInput>;

export const ListSourcesQuery = z.strictObject({
  tenant_id: idOf('tenant').optional(),
  limit: z.unknown().optional(),
  cursor: z.unknown().optional(),
});
export type ListSourcesQuery = z.output<typeof ListSourcesQuery>;

/** POST /sources/{id}/rotate_secret: the provider's new secret (generated for standard_webhooks and bearer). */
export const RotateSourceSecretInput = z.strictObject({
  secret: z.string().min(1).max(1024).optional(),
  overlap_seconds: z.number().int().min(0).max(86_400).default(86_400),
});
export type RotateSourceSecretInput = z.output<typeof RotateSourceSecretInput>;

/** POST /sources/{id}/rotate_token: a new receive URL; the old one keeps working during the overlap. */
export const RotateSourceTokenInput = z.strictObject({
  overlap_seconds: z.number().int().min(0).max(86_400).default(86_400),
});
export type RotateSourceTokenInput = z.output<typeof RotateSourceTokenInput>;
