'use client';

import { useRouter } from 'next/navigation';
import { Select } from '@mantine/core';
import { monthsBefore } from './usage.types';

/** How many billing months the selector offers, the current one first. */
const MONTHS_OFFERED = 13;

/** Picks the billing month; the choice goes into the URL (?month=YYYY-MM). */
export function MonthSelect({ month, currentMonth }: { month: string; currentMonth: string }) {
  const router = useRouter();
  const months = Array.from({ length: MONTHS_OFFERED }, (_, index) => monthsBefore(currentMonth, index));
  const data = months.map((value) => ({ value, label: value === currentMonth ? `${value} (this month)` : value }));
  // A month typed into the URL stays selectable.
  if (!months.includes(month)) data.push({ value: month, label: month });
  return (
    <Select
      label="Billing month (UTC)"
      data={data}
      value={month}
      onChange={(value) => {
        if (value) router.push(value === currentMonth ? '/usage' : `/usage?month=${value}`);
      }}
      allowDeselect={false}
      w={220}
      comboboxProps={{ withinPortal: true }}
    />
  );
}
