'use client';

import { Badge, Code, Group, Text, Timeline } from '@mantine/core';
import { AttemptNetworkDetail, ResponseBodyHint } from '@/components/attempt-network-detail';
import { formatDuration, formatTimestampSeconds } from '@/lib/format';
import type { Attempt } from './delivery.types';

const TRIGGERS: Record<string, string> = {
  scheduled: 'first attempt',
  retry: 'retry',
  probe: 'circuit probe',
  retry_now: 'retry now',
};

/** What the receiver answered, or why there was no answer. */
function answer(attempt: Attempt): string {
  if (attempt.statusCode !== null) return `HTTP ${attempt.statusCode}`;
  return attempt.errorKind ?? 'no answer';
}

function ResponseBody({ attempt }: { attempt: Attempt }) {
  // An attempt without an answer has no body to keep; one with an answer kept none: logging is off, or it expired.
  if (attempt.responseBody === null) return attempt.statusCode === null ? null : <ResponseBodyHint audience="team" />;
  return (
    <>
      <Text size="xs" c="dimmed">
        Response body{attempt.responseBodyEncoding === 'base64' ? ' (binary, base64)' : ''}
      </Text>
      <Code block mah={160} style={{ overflow: 'auto' }} data-testid="attempt-response-body">
        {attempt.responseBody}
      </Code>
    </>
  );
}

/** A delivery's attempts, oldest first: number, trigger, time, answer and duration, and the response body if kept. */
export function AttemptTimeline({ attempts, more }: { attempts: Attempt[]; more: boolean }) {
  if (attempts.length === 0)
    return (
      <Text size="sm" c="dimmed">
        No attempt yet.
      </Text>
    );
  return (
    <Timeline bulletSize={18} lineWidth={2} active={attempts.length - 1} aria-label="Attempts">
      {attempts.map((attempt) => (
        <Timeline.Item
          key={attempt.id}
          color={attempt.outcome === 'succeeded' ? 'green' : 'red'}
          data-testid="attempt"
          title={
            <Group gap="xs">
              <Text size="sm" fw={500}>
                Attempt {attempt.number}
              </Text>
              <Badge
                size="sm"
                variant="light"
                tt="none"
                color={attempt.outcome === 'succeeded' ? 'green' : 'red'}
                data-testid="attempt-answer"
              >
                {answer(attempt)}
              </Badge>
              <Text size="xs" c="dimmed">
                {TRIGGERS[attempt.trigger] ?? attempt.trigger}
              </Text>
            </Group>
          }
        >
          <Text size="xs" c="dimmed">
            {formatTimestampSeconds(attempt.startedAt)} · took {formatDuration(attempt.durationMs)} · URL revision{' '}
            {attempt.urlRevision}
          </Text>
          <AttemptNetworkDetail detail={attempt.errorDetail} />
          <ResponseBody attempt={attempt} />
        </Timeline.Item>
      ))}
      {more && (
        <Timeline.Item title="More attempts" color="gray">
          <Text size="xs" c="dimmed">
            Only the first {attempts.length} attempts are shown.
          </Text>
        </Timeline.Item>
      )}
    </Timeline>
  );
}
