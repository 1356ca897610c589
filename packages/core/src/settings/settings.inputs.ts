import { z } from 'zod';
import { PortalFrameOrigins } from '../portal/portal-session.inputs.js';

export const UpdateSettingsInput = z.strictObject({
  payload_retention_days: z.number().int().min(1).max(30).optional(),
  response_body_logging: z.boolean().optional(),
  response_retention_days: z.number().int().min(1).max(7).optional(),
  /** An extension (docs/portal.md): the origins allowed to frame the receivers' portal. */
  portal_frame_origins: PortalFrameOrigins.optional(),
});
export type UpdateSettingsInput = z.output<typeof UpdateSettingsInput>;
