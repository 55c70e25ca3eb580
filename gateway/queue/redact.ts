/**
 * A destination as it may appear in logs: scheme, host and path only. Query strings and userinfo
 * often carry tokens of the receiving application.
 */
export function redactDestination(destination: string): string {
  try {
    const url = new URL(destination);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '<unparsable destination>';
  }
}
