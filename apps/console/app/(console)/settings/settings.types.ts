import type { SettingsFieldsFragment } from '@/gql/graphql';

export type Limit = SettingsFieldsFragment['limits'][number];

export type Settings = SettingsFieldsFragment;

export interface SettingsChanges {
  payloadRetentionDays: number;
  responseBodyLogging: boolean;
  responseRetentionDays: number;
  /** The origins allowed to frame the receivers' portal (docs/portal.md). */
  portalFrameOrigins: string[];
}
