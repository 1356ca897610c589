'use client';

import { Code } from '@mantine/core';
import { fieldMessage } from '@/lib/api-error';
import { JsonEditor } from '@/components/json-editor';
import type { FormSectionProps } from './endpoint-form-values';

const FILTER_HELP = (
  <>
    Deliver only matching events. A condition{' '}
    <Code>{'{"path": "/pointer", "op": "eq|ne|in|exists|gt|gte|lt|lte|prefix", "value": …}'}</Code> or a group{' '}
    <Code>{'{"all": […]}'}</Code>, <Code>{'{"any": […]}'}</Code>, <Code>{'{"not": …}'}</Code>; at most 5 levels and 50
    conditions. Empty means every event.
  </>
);

const TRANSFORM_HELP = (
  <>
    Build the delivered body from the payload:{' '}
    <Code>{'{"fields": [{"name": "x", "from": "/pointer", "required": true}, {"name": "y", "value": …}]}'}</Code>. Empty
    delivers the payload as it is.
  </>
);

/** The filter and transform, as JSON text kept exactly as typed and checked on every keystroke. */
export function RuleFields({ values, change, error }: FormSectionProps) {
  return (
    <>
      <JsonEditor
        label="Filter"
        description={FILTER_HELP}
        value={values.filter}
        onChange={(filter) => change({ filter })}
        serverError={fieldMessage(error, 'filter')}
        placeholder={'{"path": "/type", "op": "eq", "value": "sale"}'}
        minRows={3}
      />
      <JsonEditor
        label="Transform"
        description={TRANSFORM_HELP}
        value={values.transform}
        onChange={(transform) => change({ transform })}
        serverError={fieldMessage(error, 'transform')}
        placeholder={'{"fields": [{"name": "total", "from": "/amount", "required": true}]}'}
        minRows={3}
      />
    </>
  );
}
