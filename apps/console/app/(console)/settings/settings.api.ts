import 'server-only';
import { consoleRequest } from '@/lib/console-api.server';
import type { Settings, SettingsChanges } from './settings.types';

const SETTINGS_FIELDS =
  'configurationVersion payloadRetentionDays responseBodyLogging responseRetentionDays etag limits { name value unit measured }';

export async function getSettings(): Promise<Settings> {
  const data = await consoleRequest<{ settings: Settings }>(`query Settings { settings { ${SETTINGS_FIELDS} } }`);
  return data.settings;
}

export async function updateSettings(etag: string, input: SettingsChanges): Promise<Settings> {
  const data = await consoleRequest<{ updateSettings: Settings }>(
    `mutation UpdateSettings($etag: String!, $input: UpdateSettingsInput!) { updateSettings(etag: $etag, input: $input) { ${SETTINGS_FIELDS} } }`,
    { etag, input },
  );
  return data.updateSettings;
}
