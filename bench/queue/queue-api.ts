/**
 * One request to a queue gateway's API as the binding's token holder; a status other than 2xx
 * throws, naming the route and the answer, so a benchmark stops at the first refusal.
 */
export async function queueApi(
  base: string,
  token: string,
  route: string,
  init: RequestInit,
): Promise<Response> {
  const response = await fetch(`${base}${route}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
  });
  if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`);
  return response;
}
