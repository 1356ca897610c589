'use client';

import { Code, Select, Switch, Text, TextInput } from '@mantine/core';
import { fieldMessage, type ApiError } from '@/lib/api-error';
import { MONO_INPUT } from '@/components/scope-filter-fields';
import { defaultHint, type SettingField, type SettingValues } from './verifier-settings';

interface SettingsFieldsProps {
  fields: readonly SettingField[];
  values: SettingValues;
  onChange: (name: string, value: string | boolean) => void;
  error: ApiError | null;
}

function Description({ field }: { field: SettingField }) {
  const hint = defaultHint(field);
  return (
    <>
      <Code fz="xs">{field.name}</Code>
      {field.description ? ` ${field.description}` : ''}
      {hint ? ` ${hint}` : ''}
    </>
  );
}

/** Exactly the settings of the picked kind, as its settings description lists them, with their defaults filled in. */
export function SettingsFields({ fields, values, onChange, error }: SettingsFieldsProps) {
  if (fields.length === 0)
    return (
      <Text size="sm" c="dimmed">
        This kind has no settings.
      </Text>
    );
  return (
    <>
      {fields.map((field) => {
        const value = values[field.name];
        const common = {
          label: field.label,
          description: <Description field={field} />,
          error: fieldMessage(error, `verification.${field.name}`),
          required: field.required,
        };
        if (field.input === 'boolean')
          return (
            <Switch
              key={field.name}
              {...common}
              checked={value === true}
              onChange={(event) => onChange(field.name, event.currentTarget.checked)}
            />
          );
        const text = typeof value === 'string' ? value : '';
        if (field.input === 'select')
          return (
            <Select
              key={field.name}
              {...common}
              data={field.options}
              value={text === '' ? null : text}
              onChange={(picked) => onChange(field.name, picked ?? '')}
              clearable={!field.required}
              allowDeselect={!field.required}
              comboboxProps={{ withinPortal: true }}
              maw={320}
            />
          );
        return (
          <TextInput
            key={field.name}
            {...common}
            value={text}
            onChange={(event) => onChange(field.name, event.currentTarget.value)}
            inputMode={field.input === 'number' ? 'numeric' : undefined}
            maxLength={field.maxLength ?? undefined}
            spellCheck={false}
            autoComplete="off"
            styles={MONO_INPUT}
          />
        );
      })}
    </>
  );
}
