'use client';

import { Group, Input, SegmentedControl, Select, Stack, TextInput } from '@mantine/core';
import { fieldMessage, type ApiError } from '@/lib/api-error';
import { MONO_INPUT } from '@/components/scope-filter-fields';
import type { EventTypeChoice } from '../messages/message.types';
import type { EventTypeMapping } from './source.types';

/** The mapping as typed. */
export interface MappingValues {
  mode: 'fixed' | 'path';
  eventType: string | null;
  path: string;
  prefix: string;
}

/** The API fields the mapping is sent as. */
export const MAPPING_FIELDS = ['event_type', 'event_type_path', 'event_type_prefix'] as const;

export function initialMapping(source?: {
  eventType: string | null;
  eventTypePath: string | null;
  eventTypePrefix: string | null;
}): MappingValues {
  return {
    mode: source?.eventTypePath ? 'path' : 'fixed',
    eventType: source?.eventType ?? null,
    path: source?.eventTypePath ?? '',
    prefix: source?.eventTypePrefix ?? '',
  };
}

/** Exactly one of a fixed type and a path; a blank prefix is none. */
export function toMapping(
  values: MappingValues,
): { ok: true; mapping: EventTypeMapping } | { ok: false; error: ApiError } {
  if (values.mode === 'fixed') {
    if (values.eventType === null)
      return {
        ok: false,
        error: { code: 'invalid_field', message: 'Pick the event type of every capture.', field: 'event_type' },
      };
    return { ok: true, mapping: { eventType: values.eventType } };
  }
  if (values.path.trim() === '')
    return {
      ok: false,
      error: { code: 'invalid_field', message: 'Enter a JSON Pointer such as /type.', field: 'event_type_path' },
    };
  return { ok: true, mapping: { eventTypePath: values.path.trim(), eventTypePrefix: values.prefix || null } };
}

interface MappingFieldsProps {
  values: MappingValues;
  onChange: (patch: Partial<MappingValues>) => void;
  eventTypes: EventTypeChoice[];
  error: ApiError | null;
}

const MODES = [
  { value: 'fixed', label: 'One event type' },
  { value: 'path', label: 'From the body' },
];

/** How each capture gets its event type: one type of the catalog, or the value at a JSON Pointer with a prefix. */
export function MappingFields({ values, onChange, eventTypes, error }: MappingFieldsProps) {
  const names = eventTypes.map((type) => type.name);
  // A source may still name a type archived since; keep it pickable so an unrelated edit does not lose it.
  if (values.eventType !== null && !names.includes(values.eventType)) names.unshift(values.eventType);
  return (
    <Stack>
      <Input.Wrapper label="Event type of captures">
        <SegmentedControl
          display="flex"
          w="fit-content"
          mt={6}
          aria-label="Event type of captures"
          data={MODES}
          value={values.mode}
          onChange={(mode) => onChange({ mode: mode === 'path' ? 'path' : 'fixed' })}
        />
      </Input.Wrapper>
      {values.mode === 'fixed' ? (
        <Select
          label="Event type"
          description="Every capture gets this type of your catalog."
          placeholder={names.length === 0 ? 'No event types yet' : 'Type a name'}
          data={names}
          value={values.eventType}
          onChange={(eventType) => onChange({ eventType })}
          searchable
          required
          nothingFoundMessage="No event type matches"
          maxDropdownHeight={280}
          limit={200}
          error={fieldMessage(error, 'event_type')}
          comboboxProps={{ withinPortal: true }}
          maw={420}
        />
      ) : (
        <Group grow align="flex-start">
          <TextInput
            label="Event type path"
            description="A JSON Pointer into the captured body, e.g. /type; for a form-encoded body, /FieldName."
            placeholder="/type"
            value={values.path}
            onChange={(event) => onChange({ path: event.currentTarget.value })}
            error={fieldMessage(error, 'event_type_path')}
            required
            spellCheck={false}
            styles={MONO_INPUT}
          />
          <TextInput
            label="Event type prefix"
            description="Put before the value found, e.g. vendor. makes order.paid vendor.order.paid. Blank for none."
            value={values.prefix}
            onChange={(event) => onChange({ prefix: event.currentTarget.value })}
            error={fieldMessage(error, 'event_type_prefix')}
            spellCheck={false}
            styles={MONO_INPUT}
          />
        </Group>
      )}
    </Stack>
  );
}
