/** Timestamps in UTC with minutes, the same on the server and in every browser (no hydration drift). */
export function formatTimestamp(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}
