export interface Limit {
  name: string;
  value: number;
  unit: string;
  measured: boolean;
}

export interface Settings {
  configurationVersion: string;
  payloadRetentionDays: number;
  responseBodyLogging: boolean;
  responseRetentionDays: number;
  etag: string;
  limits: Limit[];
}

export interface SettingsChanges {
  payloadRetentionDays: number;
  responseBodyLogging: boolean;
  responseRetentionDays: number;
}
