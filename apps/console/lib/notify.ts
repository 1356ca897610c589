'use client';

import { notifications } from '@mantine/notifications';
import type { ApiError } from './api-error';

const TITLES: Record<string, string> = {
  revision_conflict: 'Changed elsewhere',
  rate_limited: 'Too many requests',
  quota_exceeded: 'Limit reached',
  invalid_state: 'Not possible now',
  not_found: 'Not found',
  temporarily_unavailable: 'API unavailable',
  account_suspended: 'Account suspended',
  unauthorized: 'Signed out',
};

export function notifyApiError(error: ApiError): void {
  const hint = error.code === 'revision_conflict' ? ' The list now shows the current version; try again.' : '';
  notifications.show({
    color: 'red',
    title: TITLES[error.code] ?? 'Request failed',
    message: `${error.message}${hint}`,
    autoClose: 8000,
  });
}

export function notifySuccess(message: string): void {
  notifications.show({ color: 'green', title: 'Done', message });
}
