import { z } from 'zod';
import { boundedText, metadataSchema } from '../common/validation.js';

export const EXTERNAL_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

export const CreateTenantInput = z.strictObject({
  external_id: z.string().regex(EXTERNAL_ID_PATTERN, 'must be 1 to 128 letters, digits, _ . : -'),
  name: boundedText(1, 128),
  metadata: metadataSchema.default({}),
});
export type CreateTenantInput = z.output<typeof CreateTenantInput>;

export const UpdateTenantInput = z.strictObject({
  name: boundedText(1, 128).optional(),
  metadata: metadataSchema.optional(),
});
export type UpdateTenantInput = z.output<typeof UpdateTenantInput>;

export const ListTenantsQuery = z.strictObject({
  external_id: z.string().regex(EXTERNAL_ID_PATTERN).optional(),
  limit: z.unknown().optional(),
  cursor: z.unknown().optional(),
});
export type ListTenantsQuery = z.output<typeof ListTenantsQuery>;
