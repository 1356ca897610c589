import 'server-only';
import { graphql } from '@/gql';
import { consoleRequest } from '@/lib/console-api.server';
import type { Settings, SettingsChanges } from './settings.types';

graphql(`
  fragment SettingsFields on Settings {
    configurationVersion
    payloadRetentionDays
    responseBodyLogging
    responseRetentionDays
    portalFrameOrigins
    etag
    limits {
      name
      value
      unit
      measured
    }
  }
`);

const SettingsQuery = graphql(`
  query Settings {
    settings {
      ...SettingsFields
    }
  }
`);

const UpdateSettingsMutation = graphql(`
  mutation UpdateSettings($etag: String!, $input: UpdateSettingsInput!) {
    updateSettings(etag: $etag, input: $input) {
      ...SettingsFields
    }
  }
`);

export async function getSettings(): Promise<Settings> {
  const data = await consoleRequest(SettingsQuery);
  return data.settings;
}

export async function updateSettings(etag: string, input: SettingsChanges): Promise<Settings> {
  const data = await consoleRequest(UpdateSettingsMutation, { etag, input });
  return data.updateSettings;
}
