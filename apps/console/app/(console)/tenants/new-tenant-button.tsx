'use client';

import { Button, Modal } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { TenantForm } from './tenant-form';

export function NewTenantButton() {
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <>
      <Button onClick={open}>New tenant</Button>
      <Modal opened={opened} onClose={close} title="New tenant" size="lg">
        <TenantForm onDone={close} />
      </Modal>
    </>
  );
}
