import type { SettingsFieldsFragment } from '@/gql/graphql';

export type Limit = SettingsFieldsFragment['limits'][number];

export type Settings = SettingsFieldsFragment;

export interface SettingsChanges {
  payloadRetentionDays: number;
  responseBodyLogging: boolean;
  responseRetentionDays: number;
}
