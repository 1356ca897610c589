import { z } from 'zod';

export const UpdateSettingsInput = z.strictObject({
  payload_retention_days: z.number().int().min(1).max(30).optional(),
  response_body_logging: z.boolean().optional(),
  response_retention_days: z.number().int().min(1).max(7).optional(),
});
export type UpdateSettingsInput = z.output<typeof UpdateSettingsInput>;
