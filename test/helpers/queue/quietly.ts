/**
 * Runs an SDK call with console.error silenced: the SDK logs every refused request there, and a
 * test's expected refusals need not clutter the output.
 */
export async function quietly<T>(call: () => Promise<T>): Promise<T> {
  const original = console.error;
  console.error = () => undefined;
  try {
    return await call();
  } finally {
    console.error = original;
  }
}
