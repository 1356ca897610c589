'use client';

import { Input, NumberInput, SegmentedControl, SimpleGrid, TagsInput, type NumberInputProps } from '@mantine/core';
import { fieldMessage } from '@/lib/api-error';
import type { FormSectionProps } from './endpoint-form-values';

/** How fast, how wide and how persistently deliveries go out. */
export function DeliveryFields({ values, change, error }: FormSectionProps) {
  return (
    <>
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <Input.Wrapper
          label="Delivery order"
          description={
            values.ordering === 'ordered'
              ? 'One at a time, in the order messages were accepted, each with an Svc-Sequence header'
              : 'Each delivery goes on its own, up to the max concurrency at once'
          }
          error={fieldMessage(error, 'ordering')}
        >
          <SegmentedControl
            display="flex"
            w="fit-content"
            mt={6}
            aria-label="Delivery order"
            value={values.ordering}
            onChange={(ordering) => change({ ordering: ordering === 'ordered' ? 'ordered' : 'none' })}
            data={[
              { value: 'none', label: 'Independent' },
              { value: 'ordered', label: 'Ordered' },
            ]}
          />
        </Input.Wrapper>
        {values.ordering === 'ordered' && (
          <Input.Wrapper
            label="When a delivery fails for good"
            description={
              values.orderingOnFailure === 'hold'
                ? 'The endpoint pauses until you enable it: nothing behind the failed delivery goes'
                : 'It becomes a dead letter and the next delivery goes'
            }
            error={fieldMessage(error, 'ordering_on_failure')}
          >
            <SegmentedControl
              display="flex"
              w="fit-content"
              mt={6}
              aria-label="When a delivery fails for good"
              value={values.orderingOnFailure}
              onChange={(orderingOnFailure) =>
                change({ orderingOnFailure: orderingOnFailure === 'hold' ? 'hold' : 'continue' })
              }
              data={[
                { value: 'continue', label: 'Continue' },
                { value: 'hold', label: 'Hold' },
              ]}
            />
          </Input.Wrapper>
        )}
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <WholeNumberInput
          label="Max concurrency"
          description={values.ordering === 'ordered' ? 'Ordered: one at a time' : 'Requests in flight at once: 1 to 3'}
          disabled={values.ordering === 'ordered'}
          value={values.ordering === 'ordered' ? 1 : values.maxConcurrency}
          onChange={(maxConcurrency) => change({ maxConcurrency })}
          min={1}
          max={3}
          error={fieldMessage(error, 'max_concurrency')}
        />
        <WholeNumberInput
          label="Rate per second"
          description="Deliveries started per second: 1 to 1000"
          value={values.ratePerSecond}
          onChange={(ratePerSecond) => change({ ratePerSecond })}
          min={1}
          max={1000}
          error={fieldMessage(error, 'rate_per_second')}
        />
        <WholeNumberInput
          label="Timeout (seconds)"
          description="How long to wait for an answer: 1 to 30"
          value={values.timeoutSeconds}
          onChange={(timeoutSeconds) => change({ timeoutSeconds })}
          min={1}
          max={30}
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

/** A whole, positive number; a value out of range stays as typed, and the API's answer says what is wrong. */
function WholeNumberInput(props: NumberInputProps) {
  return <NumberInput clampBehavior="none" allowDecimal={false} allowNegative={false} {...props} />;
}
