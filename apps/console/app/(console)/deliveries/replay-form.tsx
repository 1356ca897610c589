'use client';

import { useEffect, useState, useTransition } from 'react';
import Link from 'next/link';
import { Alert, Anchor, Button, Checkbox, Group, List, Loader, Radio, Stack, Text } from '@mantine/core';
import type { ActionResult, ApiError } from '@/lib/api-error';
import { knownProblem } from '@/lib/api-problem';
import { plural } from '@/lib/format';
import { callAction, isOutcomeUnknown, useIdempotencyKey } from '@/lib/idempotency-key';
import { FormActions } from '@/components/form-actions';
import { quoteReplaysAction, replayDeliveriesAction } from './actions';
import type { ReplayConfiguration, ReplayOutcome, ReplayQuote } from './delivery.types';

interface ReplayFormProps {
  deliveryIds: string[];
  onClose: () => void;
  /** Called once replays were made, so the page behind shows the new generations. */
  onReplayed: (outcomes: ReplayOutcome[]) => void;
}

/** What confirming replays: repaired deliveries only when asked for, since a replay of them is charged again. */
function chosen(quote: ReplayQuote, includeRepaired: boolean) {
  const items = quote.items.filter((item) => item.replayable && (includeRepaired || item.repairedBy === null));
  return includeRepaired
    ? { items, deliveryUnits: quote.deliveryUnits, totalUsd: quote.totalUsd }
    : { items, deliveryUnits: quote.unrepairedDeliveryUnits, totalUsd: quote.unrepairedTotalUsd };
}

interface QuoteProps {
  quote: ReplayQuote;
  includeRepaired: boolean;
  onIncludeRepaired: (include: boolean) => void;
}

function Quote({ quote, includeRepaired, onIncludeRepaired }: QuoteProps) {
  const refused = quote.items.filter((item) => !item.replayable);
  const repaired = quote.items.filter((item) => item.replayable && item.repairedBy !== null);
  const { items, deliveryUnits, totalUsd } = chosen(quote, includeRepaired);
  return (
    <Stack gap="xs">
      <Text size="sm" data-testid="replay-price">
        {items.length > 0
          ? `Replaying ${plural(items.length, 'delivery', 'deliveries')} costs ${totalUsd} USD (${plural(deliveryUnits, 'delivery unit')}).`
          : repaired.length > 0
            ? 'Every delivery in this selection that can be replayed is already repaired.'
            : 'Nothing in this selection can be replayed.'}
      </Text>
      {repaired.length > 0 && (
        <Alert
          color="teal"
          title={`${plural(repaired.length, 'delivery', 'deliveries')} already repaired by a later replay`}
          data-testid="replay-repaired"
        >
          <Stack gap="xs">
            <List size="sm" spacing={4}>
              {repaired.map((item) => (
                <List.Item key={item.deliveryId}>
                  <Text span ff="monospace" size="xs">
                    {item.deliveryId}
                  </Text>
                  : repaired by{' '}
                  <Text span ff="monospace" size="xs">
                    {item.repairedBy}
                  </Text>{' '}
                  ({item.totalUsd} USD if replayed again)
                </List.Item>
              ))}
            </List>
            <Text size="sm">
              {includeRepaired
                ? `They are replayed too, and charged again: ${quote.totalUsd} USD in all.`
                : `They are left out, as a bulk replay leaves them out. With them: ${quote.totalUsd} USD.`}
            </Text>
            <Checkbox
              label="Replay the repaired ones too (charged again)"
              checked={includeRepaired}
              onChange={(event) => onIncludeRepaired(event.currentTarget.checked)}
            />
          </Stack>
        </Alert>
      )}
      {refused.length > 0 && (
        <Alert color="yellow" title={`${plural(refused.length, 'delivery', 'deliveries')} cannot be replayed`}>
          <List size="sm" spacing={4} data-testid="replay-refusals">
            {refused.map((item) => (
              <List.Item key={item.deliveryId}>
                <Text span ff="monospace" size="xs">
                  {item.deliveryId}
                </Text>
                : {item.reason ?? 'not replayable'}
                {item.errorCode ? ` (${item.errorCode})` : ''}
              </List.Item>
            ))}
          </List>
        </Alert>
      )}
    </Stack>
  );
}

function Outcomes({ outcomes }: { outcomes: ReplayOutcome[] }) {
  const made = outcomes.filter((outcome) => outcome.ok);
  const failed = outcomes.filter((outcome) => !outcome.ok);
  return (
    <Stack gap="xs" data-testid="replay-outcomes">
      {made.length > 0 && (
        <Alert color="green" title={`${plural(made.length, 'replay')} queued`}>
          <List size="sm" spacing={4}>
            {made.map((outcome) => (
              <List.Item key={outcome.deliveryId}>
                <Anchor component={Link} href={`/messages/${encodeURIComponent(outcome.replay.messageId)}`} size="sm">
                  {outcome.replay.id}
                </Anchor>{' '}
                (generation {outcome.replay.generation}, replays {outcome.deliveryId}, {outcome.replay.price.totalUsd}{' '}
                USD)
              </List.Item>
            ))}
          </List>
        </Alert>
      )}
      {failed.length > 0 && (
        <Alert color="red" title={`${plural(failed.length, 'replay')} refused`}>
          <List size="sm" spacing={4}>
            {failed.map((outcome) => (
              <List.Item key={outcome.deliveryId}>
                {outcome.deliveryId}: {outcome.message} ({outcome.code})
              </List.Item>
            ))}
          </List>
        </Alert>
      )}
    </Stack>
  );
}

/**
 * Prices a replay before anything is charged, then replays what can be replayed, leaving out dead letters a later
 * replay already repaired unless asked to include them (a bulk replay skips them too). The form mounts when its
 * modal opens, so each opening has its own idempotency key: confirming again after a lost answer pays once.
 */
export function ReplayForm({ deliveryIds, onClose, onReplayed }: ReplayFormProps) {
  const [configuration, setConfiguration] = useState<ReplayConfiguration>('frozen');
  // Repaired dead letters are left out unless asked for: replaying them is charged again for nothing new.
  const [includeRepaired, setIncludeRepaired] = useState(false);
  const [quote, setQuote] = useState<ActionResult<ReplayQuote> | null>(null);
  const [outcomes, setOutcomes] = useState<ReplayOutcome[] | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();
  const selection = deliveryIds.join(',');

  useEffect(() => {
    let stopped = false;
    setQuote(null);
    void callAction(() => quoteReplaysAction(selection.split(','), configuration)).then((result) => {
      if (!stopped) setQuote(result);
    });
    return () => {
      stopped = true;
    };
  }, [selection, configuration]);

  const picked = quote?.ok ? chosen(quote.data, includeRepaired) : null;
  const replayable = picked ? picked.items.map((item) => item.deliveryId) : [];

  const confirm = () =>
    startTransition(async () => {
      const result = await callAction(() => replayDeliveriesAction(replayable, configuration, idempotency.key));
      // A replay whose answer was lost keeps the key, so confirming again cannot pay for it twice.
      const lost = result.ok ? result.data.find((outcome) => !outcome.ok && isOutcomeUnknown(outcome.code)) : null;
      idempotency.settle(
        lost && !lost.ok ? { ok: false, error: { code: lost.code, message: lost.message, field: null } } : result,
      );
      if (!result.ok) {
        setError(result.error);
        return;
      }
      setError(null);
      setOutcomes(result.data);
      if (result.data.some((outcome) => outcome.ok)) onReplayed(result.data);
    });

  if (outcomes && !outcomes.some((outcome) => !outcome.ok && isOutcomeUnknown(outcome.code)))
    return (
      <Stack>
        <Outcomes outcomes={outcomes} />
        <Group justify="flex-end">
          <Button onClick={onClose}>Close</Button>
        </Group>
      </Stack>
    );

  return (
    <Stack>
      <Text size="sm">
        A replay sends the message again to the same endpoint as a new delivery: a new generation with its own attempts,
        the same webhook-id, and its own charge as a delivery. The delivery replayed stays as it is.
      </Text>
      <Radio.Group
        label="Configuration"
        value={configuration}
        onChange={(value) => setConfiguration(value === 'current' ? 'current' : 'frozen')}
      >
        <Stack gap="xs" mt={6}>
          <Radio value="frozen" label="Frozen (default): the exact bytes the delivery was sent with" />
          <Radio value="current" label="Current: the endpoint's current transform applied to the message content" />
        </Stack>
      </Radio.Group>
      {quote === null && (
        <Group gap="xs">
          <Loader size="xs" />
          <Text size="sm" c="dimmed">
            Pricing the replay…
          </Text>
        </Group>
      )}
      {quote && !quote.ok && (
        <Alert color="red" title="Could not price the replay">
          {knownProblem(quote.error)?.explanation ?? quote.error.message}
        </Alert>
      )}
      {quote?.ok && (
        <Quote quote={quote.data} includeRepaired={includeRepaired} onIncludeRepaired={setIncludeRepaired} />
      )}
      {outcomes && <Outcomes outcomes={outcomes} />}
      {error && (
        <Alert color="red" title="Not replayed">
          {error.message}
        </Alert>
      )}
      <FormActions
        pending={pending}
        onCancel={onClose}
        confirmLabel={
          picked && replayable.length > 0
            ? `Replay ${plural(replayable.length, 'delivery', 'deliveries')} for ${picked.totalUsd} USD`
            : 'Replay'
        }
        onConfirm={confirm}
        disabled={!quote?.ok || replayable.length === 0}
      />
    </Stack>
  );
}
