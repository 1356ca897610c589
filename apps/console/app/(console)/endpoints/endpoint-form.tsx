'use client';

import { useEffect, useRef, useState, useTransition, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import { Divider, Input, SegmentedControl, Stack, TagsInput, TextInput, Textarea } from '@mantine/core';
import { concernsField, fieldMessage, isFormLevel, type ApiError } from '@/lib/api-error';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { TenantSelect, type TenantChoices } from '@/components/tenant-select';
import { jsonProblem } from '@/components/json-editor';
import { MetadataEditor } from '@/components/metadata-editor';
import { FormActions } from '@/components/form-actions';
import { createEndpointAction, updateEndpointAction } from './actions';
import { CredentialFields } from './credential-fields';
import { DeliveryFields } from './delivery-fields';
import {
  FIELD_OF_VALUE,
  FORM_FIELDS,
  hostChanged,
  initialValues,
  toChanges,
  toCreateInput,
  type EndpointFormValues,
} from './endpoint-form-values';
import { RuleFields } from './rule-fields';
import { SignatureSchemeControl } from './signature-scheme-control';
import type { Endpoint } from './endpoint.types';

type EndpointFormProps =
  | { endpoint: Endpoint; tenantId?: undefined; tenants?: undefined; onCreated?: undefined; onDone: () => void }
  | {
      endpoint?: undefined;
      /** The tenant picked to start with, or null to pick one in the form. */
      tenantId: string | null;
      tenants: TenantChoices;
      /** The new signing secret to show once; null for ed25519, whose receivers read the public key instead. */
      onCreated: (signingSecret: string | null, endpointId: string) => void;
      onDone: () => void;
    };

/** Creates an endpoint for a tenant, or edits one; API errors appear next to the field they name. */
export function EndpointForm({ endpoint, tenantId: initialTenantId, tenants, onCreated, onDone }: EndpointFormProps) {
  const router = useRouter();
  const [tenantId, setTenantId] = useState<string | null>(initialTenantId ?? null);
  const idempotency = useIdempotencyKey();
  const [values, setValues] = useState<EndpointFormValues>(() => initialValues(endpoint));
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const formRef = useRef<HTMLFormElement>(null);
  const change = (patch: Partial<EndpointFormValues>) => {
    setValues((current) => ({ ...current, ...patch }));
    // An error about a value the operator is now changing is out of date.
    const changed = Object.keys(patch) as (keyof EndpointFormValues)[];
    if (changed.some((key) => concernsField(error, FIELD_OF_VALUE[key]))) setError(null);
  };
  const rulesInvalid = jsonProblem(values.filter) !== null || jsonProblem(values.transform) !== null;

  // The form is taller than its modal: bring the field an error is about into view.
  useEffect(() => {
    if (error) formRef.current?.querySelector('.mantine-InputWrapper-error')?.scrollIntoView({ block: 'center' });
  }, [error]);

  const fail = (problem: ApiError) => {
    setError(problem);
    if (isFormLevel(problem, FORM_FIELDS)) notifyApiError(problem);
    if (problem.code === 'revision_conflict') router.refresh();
  };

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (rulesInvalid) return;
    if (endpoint) {
      const changes = toChanges(values);
      if (!changes.ok) return setError(changes.error);
      startTransition(async () => {
        const result = await callAction(() => updateEndpointAction(endpoint.id, endpoint.etag, changes.value));
        if (!result.ok) return fail(result.error);
        notifySuccess(`Endpoint ${result.data.name} saved.`);
        onDone();
        router.refresh();
      });
      return;
    }
    if (tenantId === null)
      return setError({
        code: 'invalid_field',
        message: 'Pick the tenant this endpoint delivers for.',
        field: 'tenant_id',
      });
    const input = toCreateInput(tenantId, values);
    if (!input.ok) return setError(input.error);
    startTransition(async () => {
      const result = await callAction(() => createEndpointAction(input.value, idempotency.key));
      idempotency.settle(result);
      if (!result.ok) return fail(result.error);
      notifySuccess(`Endpoint ${result.data.endpoint.name} created.`);
      onCreated(result.data.signingSecret, result.data.endpoint.id);
      router.refresh();
    });
  };

  return (
    <form ref={formRef} onSubmit={submit} noValidate>
      <Stack>
        {tenants && (
          <TenantSelect
            tenants={tenants}
            value={tenantId}
            onChange={(picked) => {
              setTenantId(picked);
              if (concernsField(error, 'tenant_id')) setError(null);
            }}
            description="Whose webhooks this endpoint receives"
            error={fieldMessage(error, 'tenant_id')}
            required
          />
        )}
        {!endpoint && (
          <Input.Wrapper
            label="Delivery"
            description="Push POSTs each delivery to a URL; stream waits for a receiver to connect (no public URL needed)"
            error={fieldMessage(error, 'delivery_mode')}
          >
            <SegmentedControl
              display="flex"
              w="fit-content"
              mt={6}
              aria-label="Delivery"
              data={[
                { value: 'push', label: 'Push' },
                { value: 'stream', label: 'Stream' },
              ]}
              value={values.deliveryMode}
              onChange={(mode) => change({ deliveryMode: mode === 'stream' ? 'stream' : 'push' })}
            />
          </Input.Wrapper>
        )}
        {values.deliveryMode === 'push' && (
          <TextInput
            label="URL"
            description="Where deliveries are POSTed: https on port 443. The query is kept and treated as secret."
            value={values.url}
            onChange={(event) => change({ url: event.currentTarget.value })}
            error={fieldMessage(error, 'url')}
            required
            spellCheck={false}
            data-autofocus
          />
        )}
        <TextInput
          label="Name"
          value={values.name}
          onChange={(event) => change({ name: event.currentTarget.value })}
          error={fieldMessage(error, 'name')}
          required
        />
        <Textarea
          label="Description"
          value={values.description}
          onChange={(event) => change({ description: event.currentTarget.value })}
          error={fieldMessage(error, 'description')}
          autosize
          minRows={2}
          maxRows={5}
        />
        <TagsInput
          label="Events"
          description="Event type names, prefix.* or * for every event; press Enter after each"
          value={values.events}
          onChange={(events) => change({ events })}
          error={fieldMessage(error, 'events')}
          clearable
        />
        {!endpoint && (
          <Input.Wrapper label="Status" error={fieldMessage(error, 'status')}>
            <SegmentedControl
              display="flex"
              w="fit-content"
              mt={6}
              aria-label="Status"
              data={['enabled', 'paused']}
              value={values.status}
              onChange={(status) => change({ status: status === 'paused' ? 'paused' : 'enabled' })}
            />
          </Input.Wrapper>
        )}
        {!endpoint && (
          <SignatureSchemeControl
            value={values.signatureScheme}
            onChange={(signatureScheme) => change({ signatureScheme })}
            error={fieldMessage(error, 'signature_scheme')}
            description="Ed25519 gives receivers a public key instead of a secret to share; rotating the secret can switch later"
          />
        )}
        <Divider label="Delivery" labelPosition="left" />
        <DeliveryFields values={values} change={change} error={error} />
        <Divider label="Credentials" labelPosition="left" />
        <CredentialFields
          values={values}
          change={change}
          error={error}
          endpoint={endpoint}
          newHost={endpoint !== undefined && endpoint.deliveryMode === 'push' && hostChanged(endpoint.url, values.url)}
        />
        <Divider label="Filter and transform" labelPosition="left" />
        <RuleFields values={values} change={change} error={error} />
        <MetadataEditor
          rows={values.metadataRows}
          onChange={(metadataRows) => change({ metadataRows })}
          error={fieldMessage(error, 'metadata')}
        />
        <FormActions
          pending={pending}
          onCancel={onDone}
          confirmLabel={endpoint ? 'Save' : 'Create endpoint'}
          disabled={rulesInvalid}
        />
      </Stack>
    </form>
  );
}
