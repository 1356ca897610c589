'use client';

import { useEffect, useState, useTransition, type ChangeEvent } from 'react';
import { useRouter } from 'next/navigation';
import { Alert, Group, Loader, Stack, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { fieldMessage, isFormLevel, type ActionResult, type ApiError } from '@/lib/api-error';
import { knownProblem } from '@/lib/api-problem';
import { plural } from '@/lib/format';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { toApiTimestamp } from '@/lib/time-window';
import { FormActions } from '@/components/form-actions';
import { estimateReplayAction, startReplayAction } from './actions';
import { REPLAY_SELECTION_FIELDS, type ReplayEstimate, type ReplaySelection } from './replay.types';

/** The dialog's inputs as typed: times in UTC as a datetime-local field holds them (2025-03-01T09:30). */
export interface ReplayInputs {
  createdAfter: string;
  createdBefore: string;
  eventType: string;
}

interface StartReplayFormProps {
  endpointId: string;
  initial: ReplayInputs;
  onClose: () => void;
}

/** How long typing must pause before the estimate is asked again. */
const ESTIMATE_DELAY_MS = 400;

function toSelection(endpointId: string, inputs: ReplayInputs & { maxCostUsd: string }): ReplaySelection {
  return {
    endpointId,
    createdAfter: inputs.createdAfter.trim() && toApiTimestamp(inputs.createdAfter.trim()),
    createdBefore: inputs.createdBefore.trim() && toApiTimestamp(inputs.createdBefore.trim()),
    eventType: inputs.eventType.trim(),
    maxCostUsd: inputs.maxCostUsd.trim(),
  };
}

function EstimateSummary({ estimate }: { estimate: ReplayEstimate }) {
  const { matched, estimate: all, withinMaxCost, maxCostUsd } = estimate;
  const cut = maxCostUsd !== null && withinMaxCost.deliveries < all.deliveries;
  return (
    <Stack gap={4} data-testid="replay-estimate">
      <Text size="sm" data-testid="replay-estimate-matched">
        {matched === 0
          ? 'No failed or expired delivery of this endpoint matches.'
          : `${plural(matched, 'dead letter')} match: ${plural(all.deliveries, 'delivery', 'deliveries')} can be replayed for ${all.costUsd} USD.`}
      </Text>
      {all.skipped > 0 && (
        <Text size="sm" c="dimmed" data-testid="replay-estimate-skipped">
          {`${plural(all.skipped, 'dead letter')} will be skipped: their content is redacted or past retention.`}
        </Text>
      )}
      {maxCostUsd !== null && (
        <Text size="sm" c={cut ? 'orange' : undefined} data-testid="replay-estimate-bound">
          {cut
            ? `Within the bound of ${maxCostUsd} USD: ${plural(withinMaxCost.deliveries, 'delivery', 'deliveries')} for ${withinMaxCost.costUsd} USD, oldest first; the replay stops there.`
            : `Within the bound of ${maxCostUsd} USD: all ${plural(withinMaxCost.deliveries, 'delivery', 'deliveries')}, for ${withinMaxCost.costUsd} USD.`}
        </Text>
      )}
    </Stack>
  );
}

/**
 * Replays an endpoint's dead letters of a window. The estimate (nothing charged) follows the inputs and must be
 * current before the replay can start; the form mounts when its modal opens, so each opening has its own
 * idempotency key and confirming again after a lost answer starts one replay.
 */
export function StartReplayForm({ endpointId, initial, onClose }: StartReplayFormProps) {
  const router = useRouter();
  const [inputs, setInputs] = useState({ ...initial, maxCostUsd: '' });
  const [debounced] = useDebouncedValue(inputs, ESTIMATE_DELAY_MS);
  const [estimate, setEstimate] = useState<{ key: string; result: ActionResult<ReplayEstimate> } | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();
  const selection = toSelection(endpointId, inputs);
  const selectionKey = JSON.stringify(selection);
  const debouncedKey = JSON.stringify(toSelection(endpointId, debounced));

  useEffect(() => {
    let stopped = false;
    const asked = JSON.parse(debouncedKey) as ReplaySelection;
    void callAction(() => estimateReplayAction(asked)).then((result) => {
      if (!stopped) setEstimate({ key: debouncedKey, result });
    });
    return () => {
      stopped = true;
    };
  }, [debouncedKey]);

  const current = estimate?.key === selectionKey ? estimate.result : null;
  const shownError = error ?? (current && !current.ok ? current.error : null);
  const replayable = current?.ok ? current.data.withinMaxCost.deliveries : 0;
  const set = (name: keyof typeof inputs) => (event: ChangeEvent<HTMLInputElement>) => {
    const value = event.currentTarget.value;
    setError(null);
    setInputs((previous) => ({ ...previous, [name]: value }));
  };

  const confirm = () =>
    startTransition(async () => {
      const result = await callAction(() => startReplayAction(selection, idempotency.key));
      idempotency.settle(result);
      if (!result.ok) {
        setError(result.error);
        return;
      }
      router.push(`/replays/${encodeURIComponent(result.data.id)}`);
      onClose();
    });

  return (
    <Stack>
      <Text size="sm">
        Sends this endpoint&apos;s failed and expired deliveries created in the window again, as new deliveries (a new
        generation each, same webhook-id), in batches. Each batch is charged to your key as it is created; a message
        whose content is redacted or past retention is skipped. Empty times mean the last 30 days (at most 30 days).
      </Text>
      <Group align="flex-start" gap="xs" grow>
        <TextInput
          type="datetime-local"
          label="Created after (UTC)"
          value={inputs.createdAfter}
          onChange={set('createdAfter')}
          error={fieldMessage(shownError, 'created_after')}
        />
        <TextInput
          type="datetime-local"
          label="Created before (UTC)"
          value={inputs.createdBefore}
          onChange={set('createdBefore')}
          error={fieldMessage(shownError, 'created_before')}
        />
      </Group>
      <Group align="flex-start" gap="xs" grow>
        <TextInput
          label="Event type"
          placeholder="Every event type"
          value={inputs.eventType}
          onChange={set('eventType')}
          error={fieldMessage(shownError, 'event_type')}
        />
        <TextInput
          label="Max cost (USD)"
          placeholder="No bound"
          description="Creation stops before the cost would pass it"
          value={inputs.maxCostUsd}
          onChange={set('maxCostUsd')}
          error={fieldMessage(shownError, 'max_cost_usd')}
          inputMode="decimal"
        />
      </Group>
      {current === null && (
        <Group gap="xs">
          <Loader size="xs" />
          <Text size="sm" c="dimmed">
            Estimating the replay…
          </Text>
        </Group>
      )}
      {current?.ok && <EstimateSummary estimate={current.data} />}
      {shownError && isFormLevel(shownError, REPLAY_SELECTION_FIELDS) && (
        <Alert color="red" title={error ? 'Replay not started' : 'Could not estimate the replay'}>
          {knownProblem(shownError)?.explanation ?? shownError.message}
        </Alert>
      )}
      <FormActions
        pending={pending}
        onCancel={onClose}
        confirmLabel={
          current?.ok && replayable > 0
            ? `Start replay: ${plural(replayable, 'delivery', 'deliveries')} for ${current.data.withinMaxCost.costUsd} USD`
            : 'Start replay'
        }
        onConfirm={confirm}
        disabled={!current?.ok || replayable === 0}
      />
    </Stack>
  );
}
