'use client';

import type { ApiError } from '@/lib/api-error';
import { usePolled, type Polled } from '@/lib/use-polled';
import { isPendingDelivery } from '../deliveries/delivery.types';
import { getMessageAction, getMessageInspectionAction } from './actions';
import { isTerminal, type Message, type MessageInspection } from './message.types';

/** The message kept fresh until its status is terminal (the endpoint's test message result). */
export function useLiveMessage(initial: Message): { message: Message; refreshing: boolean; error: ApiError | null } {
  const { value, refreshing, error } = usePolled(
    initial.id,
    initial,
    () => getMessageAction(initial.id),
    (message) => isTerminal(message.status),
  );
  return { message: value, refreshing, error };
}

/**
 * Nothing left to change: the message's status is terminal, no delivery of any generation is pending, and the
 * message counts the repairs its deliveries show. The message and its deliveries are read by separate statements,
 * so a replay that succeeds between them shows on the delivery first: one more read brings the message's count.
 */
export function isSettled(inspection: MessageInspection): boolean {
  const { message, deliveries, deliveriesComplete } = inspection;
  const repaired = deliveries.filter((delivery) => delivery.generation === 0 && delivery.repairedBy !== null).length;
  return (
    isTerminal(message.status) &&
    deliveries.every((delivery) => !isPendingDelivery(delivery.status)) &&
    (!deliveriesComplete || message.repairedCount >= repaired)
  );
}

/**
 * The message with its deliveries and attempts kept fresh while anything is pending or in flight, replays
 * included (they never change the message's status); it stops once every delivery has finished.
 */
export function useLiveMessageInspection(initial: MessageInspection): Polled<MessageInspection> {
  const id = initial.message.id;
  return usePolled(id, initial, () => getMessageInspectionAction(id), isSettled);
}
