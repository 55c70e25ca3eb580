/**
 * Sums over a list read a page at a time, so a bench that checks thousands of objects holds one
 * page of them, not the whole list: client-node turns each item into its model classes, and at
 * 2,000 instances the StatefulSets, Services, ConfigMaps and Secrets read whole took the bench
 * process past 256 MB.
 */
export interface ListPage<T> {
  items: T[];
  metadata?: { _continue?: string };
}

/** Pages of this size: a few MB of StatefulSets with their managed fields. */
export const PAGE_LIMIT = 250;

export async function sumOverPages<T>(
  list: (page: { limit: number; _continue?: string }) => Promise<ListPage<T>>,
  measure: (item: T) => number = () => 1,
): Promise<number> {
  let sum = 0;
  let next: string | undefined;
  do {
    const page = await list({ limit: PAGE_LIMIT, ...(next ? { _continue: next } : {}) });
    for (const item of page.items) sum += measure(item);
    next = page.metadata?._continue || undefined;
  } while (next);
  return sum;
}
