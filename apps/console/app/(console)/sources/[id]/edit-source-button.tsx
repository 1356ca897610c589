'use client';

import { Button, Modal } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { EventTypeChoice } from '../../messages/message.types';
import type { Source, VerifierKind } from '../source.types';
import { EditSourceForm } from './edit-source-form';

interface EditSourceButtonProps {
  source: Source;
  kind: VerifierKind | null;
  eventTypes: EventTypeChoice[];
}

export function EditSourceButton({ source, kind, eventTypes }: EditSourceButtonProps) {
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <>
      <Button variant="light" onClick={open}>
        Edit
      </Button>
      <Modal opened={opened} onClose={close} title={`Edit source ${source.name}`} size="xl">
        {/* Remount on a new version so the form starts from what the API stored. */}
        <EditSourceForm key={source.etag} source={source} kind={kind} eventTypes={eventTypes} onDone={close} />
      </Modal>
    </>
  );
}
