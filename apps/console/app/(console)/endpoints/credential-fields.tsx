'use client';

import { Input, PasswordInput, SegmentedControl, Stack } from '@mantine/core';
import { fieldMessage } from '@/lib/api-error';
import { KeyValueEditor } from '@/components/key-value-editor';
import type { CredentialChoice, FormSectionProps } from './endpoint-form-values';
import type { Endpoint } from './endpoint.types';

interface CredentialFieldsProps extends FormSectionProps {
  /** The endpoint being edited; its header values and authorization cannot be shown, only kept or replaced. */
  endpoint?: Endpoint | undefined;
  /** The URL now has another host, so the API wants both given again. */
  newHost: boolean;
}

const AUTHORIZATION_CHOICES: { value: CredentialChoice; label: string }[] = [
  { value: 'keep', label: 'Keep' },
  { value: 'clear', label: 'Clear' },
  { value: 'replace', label: 'Replace' },
];

const HEADER_CHOICES = [
  { value: 'keep', label: 'Keep' },
  { value: 'replace', label: 'Replace' },
];

/** Custom headers and the Authorization header: write-only values sent with every delivery. */
export function CredentialFields({ values, change, error, endpoint, newHost }: CredentialFieldsProps) {
  const headersError = fieldMessage(error, 'headers');
  const authorizationError = fieldMessage(error, 'authorization');
  const headerRows = (
    <KeyValueEditor
      label={endpoint ? 'New headers' : 'Custom headers'}
      description={
        endpoint
          ? 'Type every value again. No rows removes all custom headers.'
          : 'Sent with every delivery. Values are write-only: they cannot be read back.'
      }
      noun="header"
      rows={values.headerRows}
      onChange={(headerRows) => change({ headerRows })}
      maskValues
      error={endpoint ? undefined : headersError}
    />
  );
  // A stream endpoint sends no Authorization value (it has no URL); its custom headers go in each event.
  if (values.deliveryMode === 'stream' && !endpoint) return headerRows;
  if (!endpoint)
    return (
      <>
        {headerRows}
        <PasswordInput
          label="Authorization"
          description="The Authorization header value, such as Bearer …; write-only. Leave empty for none."
          value={values.authorization}
          onChange={(event) => change({ authorization: event.currentTarget.value })}
          autoComplete="off"
          error={authorizationError}
        />
      </>
    );

  const newHostHint = newHost ? ' The URL has a new host: choose Replace (or Clear) so credentials follow it.' : '';
  const names = endpoint.headers.length === 0 ? 'none' : endpoint.headers.join(', ');
  return (
    <>
      <Input.Wrapper
        label="Custom headers"
        description={`Now: ${names}. Values cannot be read back.${newHostHint}`}
        error={headersError}
        data-testid="headers-field"
      >
        <Stack gap="xs" mt={6}>
          <SegmentedControl
            aria-label="Custom headers choice"
            data={HEADER_CHOICES}
            value={values.headersChoice}
            onChange={(choice) => change({ headersChoice: choice === 'replace' ? 'replace' : 'keep' })}
            w="fit-content"
          />
          {values.headersChoice === 'replace' && headerRows}
        </Stack>
      </Input.Wrapper>
      {endpoint.deliveryMode === 'push' && (
        <Input.Wrapper
          label="Authorization"
          description={`Now: ${endpoint.hasAuthorization ? 'set' : 'not set'}. The value cannot be read back.${newHostHint}`}
          error={authorizationError}
          data-testid="authorization-field"
        >
          <Stack gap="xs" mt={6}>
            <SegmentedControl
              aria-label="Authorization choice"
              data={AUTHORIZATION_CHOICES}
              value={values.authorizationChoice}
              onChange={(choice) =>
                change({ authorizationChoice: AUTHORIZATION_CHOICES.find((c) => c.value === choice)?.value ?? 'keep' })
              }
              w="fit-content"
            />
            {values.authorizationChoice === 'replace' && (
              <PasswordInput
                label="New authorization value"
                value={values.authorization}
                onChange={(event) => change({ authorization: event.currentTarget.value })}
                autoComplete="off"
              />
            )}
          </Stack>
        </Input.Wrapper>
      )}
    </>
  );
}
