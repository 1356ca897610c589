import type { TeamSettingsEntity } from './settings.entity.js';

/** What reads show of a team's settings; transports render it (with the team's limits), never the entity. */
export interface SettingsView {
  configurationVersion: string;
  approvedConfigurationVersion: string;
  payloadRetentionDays: number;
  responseBodyLogging: boolean;
  responseRetentionDays: number;
  portalFrameOrigins: string[];
  etag: string;
  updatedAt: Date;
}

/** Settings have one row per team: the ETag names the configuration version alone. */
export function settingsEtag(configurationVersion: string): string {
  return `"wd:settings:${configurationVersion}"`;
}

export function toSettingsView(settings: TeamSettingsEntity): SettingsView {
  return {
    configurationVersion: settings.configurationVersion,
    approvedConfigurationVersion: settings.approvedConfigurationVersion,
    payloadRetentionDays: settings.payloadRetentionDays,
    responseBodyLogging: settings.responseBodyLogging,
    responseRetentionDays: settings.responseRetentionDays,
    portalFrameOrigins: settings.portalFrameOrigins,
    etag: settingsEtag(settings.configurationVersion),
    updatedAt: settings.updatedAt,
  };
}
