/**
 * A metav1.MicroTime as the API server parses it: RFC 3339 with exactly six fractional digits.
 * JavaScript's toISOString() has three, which the API server rejects for MicroTime fields such
 * as a Lease's renewTime, so those fields are written through this.
 */
export function formatMicroTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
