'use server';

import type { ActionResult } from '@/lib/api-error';
import { invalidArgument, isObject, isStringArray } from '@/lib/action-args.server';
import { toActionResult } from '@/lib/console-api.server';
import { updateSettings } from './settings.api';
import type { Settings, SettingsChanges } from './settings.types';

export async function updateSettingsAction(etag: string, input: SettingsChanges): Promise<ActionResult<Settings>> {
  if (typeof etag !== 'string' || !isObject(input)) return invalidArgument('body', 'etag and settings are required');
  if (!Number.isInteger(input.payloadRetentionDays))
    return invalidArgument('payload_retention_days', 'must be a whole number of days');
  if (!Number.isInteger(input.responseRetentionDays))
    return invalidArgument('response_retention_days', 'must be a whole number of days');
  if (typeof input.responseBodyLogging !== 'boolean')
    return invalidArgument('response_body_logging', 'must be on or off');
  if (!isStringArray(input.portalFrameOrigins))
    return invalidArgument('portal_frame_origins', 'must be a list of origins');
  return toActionResult(() =>
    updateSettings(etag, {
      payloadRetentionDays: input.payloadRetentionDays,
      responseBodyLogging: input.responseBodyLogging,
      responseRetentionDays: input.responseRetentionDays,
      portalFrameOrigins: input.portalFrameOrigins,
    }),
  );
}
