'use client';

import { useState } from 'react';
import { Alert, Button, ColorInput, Modal, NumberInput, SegmentedControl, Stack, Text, TextInput } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { ShownOnceValue } from '@/components/shown-once-value';
import { fieldMessage, type ApiError } from '@/lib/api-error';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { createPortalSessionAction, type CreatedPortalLink } from './portal-actions';
import type { Tenant } from './tenant.types';

/**
 * Opens a receivers' portal session for a tenant (docs/portal.md) and shows its one-time link: the operator hands
 * it to the tenant, who opens it once.
 */
export function PortalSessionModal({ tenant, onClose }: { tenant: Tenant | null; onClose(): void }) {
  return (
    <Modal opened={tenant !== null} onClose={onClose} title={`Portal for ${tenant?.name ?? ''}`} size="lg">
      {tenant ? <PortalSessionForm key={tenant.id} tenant={tenant} /> : null}
    </Modal>
  );
}

function PortalSessionForm({ tenant }: { tenant: Tenant }) {
  const { key, settle } = useIdempotencyKey();
  const [capabilities, setCapabilities] = useState<'read_only' | 'manage_endpoints'>('manage_endpoints');
  const [hours, setHours] = useState<number | string>(1);
  const [spendingCapUsd, setSpendingCapUsd] = useState('1');
  const [displayName, setDisplayName] = useState('');
  const [accentColor, setAccentColor] = useState('');
  const [logoUrl, setLogoUrl] = useState('');
  const [error, setError] = useState<ApiError | null>(null);
  const [link, setLink] = useState<CreatedPortalLink | null>(null);
  const [busy, setBusy] = useState(false);
  if (link)
    return (
      <Stack>
        <Text size="sm">
          Send this link to {tenant.name}. It opens once, in any browser or inside your app, and the session ends{' '}
          <span data-testid="portal-link-expires">{formatTimestamp(link.expiresAt)}</span>.
        </Text>
        {link.url ? <ShownOnceValue value={link.url} copyLabel="Copy link" testId="portal-link" /> : null}
      </Stack>
    );
  const submit = async () => {
    setBusy(true);
    const result = await callAction(() =>
      createPortalSessionAction(
        tenant.id,
        {
          capabilities,
          expiresInSeconds: Math.round(Number(hours) * 3600),
          spendingCapUsd,
          displayName,
          accentColor,
          logoUrl,
        },
        key,
      ),
    );
    settle(result);
    setBusy(false);
    if (result.ok) setLink(result.data);
    else setError(result.error);
  };
  return (
    <Stack gap="sm">
      <SegmentedControl
        value={capabilities}
        onChange={(value) => setCapabilities(value === 'read_only' ? 'read_only' : 'manage_endpoints')}
        data={[
          { value: 'manage_endpoints', label: 'Manage endpoints' },
          { value: 'read_only', label: 'Read only' },
        ]}
      />
      <NumberInput
        label="Lasts (hours)"
        description="At most 168 (7 days)"
        min={0.02}
        max={168}
        decimalScale={2}
        value={hours}
        onChange={setHours}
        error={fieldMessage(error, 'expires_in_seconds')}
      />
      <TextInput
        label="Spending cap for test events and replays (USD)"
        value={spendingCapUsd}
        onChange={(e) => setSpendingCapUsd(e.currentTarget.value)}
        error={fieldMessage(error, 'spending_cap_usd')}
      />
      <TextInput
        label="Display name"
        value={displayName}
        onChange={(e) => setDisplayName(e.currentTarget.value)}
        error={fieldMessage(error, 'branding.display_name')}
      />
      <ColorInput
        label="Accent colour"
        format="hex"
        value={accentColor}
        onChange={setAccentColor}
        error={fieldMessage(error, 'branding.accent_color')}
      />
      <TextInput
        label="Logo URL (https)"
        value={logoUrl}
        onChange={(e) => setLogoUrl(e.currentTarget.value)}
        error={fieldMessage(error, 'branding.logo_url')}
      />
      {error && !error.field ? <Alert color="red">{error.message}</Alert> : null}
      <Button onClick={() => void submit()} loading={busy}>
        Create portal link
      </Button>
    </Stack>
  );
}
