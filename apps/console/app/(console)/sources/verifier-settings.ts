import type { ApiError } from '@/lib/api-error';

/**
 * The form field of one verifier setting, read from the JSON Schema verifierKinds gives (draft 2020-12, as zod
 * writes it): a string with `enum` is a select, a boolean a switch, a number a number input, a plain string a text
 * input; `anyOf` with `{type: "null"}` makes it optional (blank sends null). Anything else is typed as JSON.
 */
export interface SettingField {
  /** The API's name, e.g. timestamp_header; errors name it as verification.<name>. */
  name: string;
  label: string;
  /** The schema's own description, when it has one. */
  description: string | null;
  input: 'text' | 'select' | 'boolean' | 'number' | 'json';
  options: string[];
  required: boolean;
  /** Blank sends null. */
  nullable: boolean;
  /** The default as the schema gives it (undefined: none). */
  defaultValue: unknown;
  maxLength: number | null;
}

/** A setting as typed: text for every input but the switch. */
export type SettingValue = string | boolean;
export type SettingValues = Record<string, SettingValue>;

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** timestamp_header -> Timestamp header */
function labelOf(name: string): string {
  const words = name.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The schema of the value itself: for `anyOf: [X, {type: null}]`, X. */
function valueSchema(schema: Schema): { schema: Schema; nullable: boolean } {
  const anyOf = Array.isArray(schema['anyOf']) ? schema['anyOf'].filter(isSchema) : null;
  if (!anyOf) return { schema, nullable: schema['type'] === 'null' };
  const others = anyOf.filter((member) => member['type'] !== 'null');
  const nullable = others.length < anyOf.length;
  return { schema: others.length === 1 ? others[0]! : {}, nullable };
}

function inputOf(schema: Schema): SettingField['input'] {
  if (Array.isArray(schema['enum']) && schema['enum'].every((value) => typeof value === 'string')) return 'select';
  if (schema['type'] === 'string') return 'text';
  if (schema['type'] === 'boolean') return 'boolean';
  if (schema['type'] === 'integer' || schema['type'] === 'number') return 'number';
  return 'json';
}

/** The settings of a kind, in the order the schema lists them. */
export function settingFields(settings: Record<string, unknown>): SettingField[] {
  const properties = isSchema(settings['properties']) ? settings['properties'] : {};
  const required = new Set(Array.isArray(settings['required']) ? settings['required'] : []);
  return Object.entries(properties)
    .filter((entry): entry is [string, Schema] => isSchema(entry[1]))
    .map(([name, property]) => {
      const { schema, nullable } = valueSchema(property);
      const description = property['description'] ?? schema['description'];
      return {
        name,
        label: typeof property['title'] === 'string' ? property['title'] : labelOf(name),
        description: typeof description === 'string' ? description : null,
        input: inputOf(schema),
        options: Array.isArray(schema['enum']) ? schema['enum'].map(String) : [],
        required: required.has(name),
        nullable,
        defaultValue: property['default'],
        maxLength: typeof schema['maxLength'] === 'number' ? schema['maxLength'] : null,
      };
    });
}

/** What the field's description says about blanks and defaults: "Default: sha256", "Optional: blank for none". */
export function defaultHint(field: SettingField): string | null {
  if (field.required) return null;
  if (field.defaultValue === null || (field.defaultValue === undefined && field.nullable)) return 'Blank for none.';
  if (field.defaultValue === undefined) return 'Blank for the default.';
  if (field.input === 'boolean') return `Default: ${field.defaultValue ? 'on' : 'off'}.`;
  return `Default: ${typeof field.defaultValue === 'string' ? field.defaultValue : JSON.stringify(field.defaultValue)}.`;
}

function asText(field: SettingField, value: unknown): string {
  if (value === undefined || value === null) return '';
  if (field.input === 'json') return JSON.stringify(value);
  return String(value);
}

/** The form's starting values: the source's current settings, else each setting's default. */
export function initialSettingValues(
  fields: readonly SettingField[],
  current?: Record<string, unknown>,
): SettingValues {
  const values: SettingValues = {};
  for (const field of fields) {
    const value = current && field.name in current ? current[field.name] : field.defaultValue;
    values[field.name] = field.input === 'boolean' ? value === true : asText(field, value);
  }
  return values;
}

function invalid(name: string, message: string): ApiError {
  return { code: 'invalid_field', message, field: `verification.${name}` };
}

/**
 * The settings to send, flat as the API takes them beside the kind. A blank optional setting is null when it may
 * be null and left out (the API's default) otherwise; a blank required one is sent blank for the API to name.
 */
export function toSettings(
  fields: readonly SettingField[],
  values: SettingValues,
): { ok: true; settings: Record<string, unknown> } | { ok: false; error: ApiError } {
  const settings: Record<string, unknown> = {};
  for (const field of fields) {
    const value = values[field.name];
    if (typeof value === 'boolean') {
      settings[field.name] = value;
      continue;
    }
    const text = (value ?? '').trim();
    if (text === '') {
      if (field.required) return { ok: false, error: invalid(field.name, `${field.label} is required.`) };
      if (field.nullable) settings[field.name] = null;
      continue;
    }
    if (field.input === 'number') {
      const number = Number(text);
      if (!Number.isFinite(number)) return { ok: false, error: invalid(field.name, 'Enter a number.') };
      settings[field.name] = number;
    } else if (field.input === 'json') {
      try {
        settings[field.name] = JSON.parse(text) as unknown;
      } catch {
        return { ok: false, error: invalid(field.name, 'Enter the value as JSON.') };
      }
    } else {
      // Text is sent as typed (hmac's signed_content may carry meaningful spaces); only blanks are trimmed away.
      settings[field.name] = value;
    }
  }
  return { ok: true, settings };
}
