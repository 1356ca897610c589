'use client';

import { NumberInput, SimpleGrid, TagsInput } from '@mantine/core';
import { fieldMessage } from '@/lib/api-error';
import type { FormSectionProps } from './endpoint-form-values';

/** How fast, how wide and how persistently deliveries go out. */
export function DeliveryFields({ values, change, error }: FormSectionProps) {
  return (
    <>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <NumberInput
          label="Max concurrency"
          description="Requests in flight at once: 1 to 3"
          value={values.maxConcurrency}
          onChange={(maxConcurrency) => change({ maxConcurrency })}
          min={1}
          max={3}
          clampBehavior="none"
          allowDecimal={false}
          allowNegative={false}
          error={fieldMessage(error, 'max_concurrency')}
        />
        <NumberInput
          label="Rate per second"
          description="Deliveries started per second: 1 to 1000"
          value={values.ratePerSecond}
          onChange={(ratePerSecond) => change({ ratePerSecond })}
          min={1}
          max={1000}
          clampBehavior="none"
          allowDecimal={false}
          allowNegative={false}
          error={fieldMessage(error, 'rate_per_second')}
        />
        <NumberInput
          label="Timeout (seconds)"
          description="How long to wait for an answer: 1 to 30"
          value={values.timeoutSeconds}
          onChange={(timeoutSeconds) => change({ timeoutSeconds })}
          min={1}
          max={30}
          clampBehavior="none"
          allowDecimal={false}
          allowNegative={false}
          error={fieldMessage(error, 'timeout_seconds')}
        />
      </SimpleGrid>
      <TagsInput
        label="Retry delays (seconds)"
        description="Waits before each retry, comma separated: at most 8, each up to 86400, 259200 in all. None means no retries."
        value={values.retryDelays}
        onChange={(retryDelays) => change({ retryDelays })}
        allowDuplicates
        clearable
        error={fieldMessage(error, 'retry_delays_seconds')}
      />
    </>
  );
}
