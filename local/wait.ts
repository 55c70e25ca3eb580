/** Polls `check` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  options: { timeoutMs: number; intervalMs?: number; abort?: Promise<unknown> },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  let aborted: unknown;
  options.abort?.then(
    (value) => (aborted = value ?? 'aborted'),
    (err: unknown) => (aborted = err),
  );
  while (Date.now() < deadline) {
    if (aborted !== undefined) break;
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
  const reason = lastError instanceof Error ? `: ${lastError.message}` : '';
  throw new Error(
    aborted !== undefined
      ? `gave up waiting for ${what}${reason}`
      : `timed out after ${options.timeoutMs} ms waiting for ${what}${reason}`,
  );
}
