import type { Redis } from 'ioredis';
import type { QueueKeys } from '../core/keys.js';
import { addUrlGroupEndpoints } from '../scripts/add-url-group-endpoints.js';
import { removeUrlGroupEndpoints } from '../scripts/remove-url-group-endpoints.js';
import type { UrlGroup, UrlGroupEndpoint } from '../core/url-group.js';

type StoredGroup = Omit<UrlGroup, 'name'>;

function toGroup(name: string, stored: string): UrlGroup {
  const group = JSON.parse(stored) as StoredGroup;
  return { name, createdAt: group.createdAt, updatedAt: group.updatedAt, endpoints: group.endpoints };
}

/** A binding's URL groups, one JSON value per group in one hash (keys.urlGroups). */
export class UrlGroupStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
  ) {}

  async get(name: string): Promise<UrlGroup | undefined> {
    const stored = await this.redis.hget(this.keys.urlGroups, name);
    return stored === null ? undefined : toGroup(name, stored);
  }

  /** Every group, by name. */
  async list(): Promise<UrlGroup[]> {
    const all = await this.redis.hgetall(this.keys.urlGroups);
    return Object.entries(all)
      .map(([name, stored]) => toGroup(name, stored))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Returns the group's endpoint count after the add; over either quota nothing is written and
   * the script's QuotaExceededError says which.
   */
  async addEndpoints(
    name: string,
    endpoints: readonly UrlGroupEndpoint[],
    options: { maxEndpoints: number; maxGroups: number; now?: number },
  ): Promise<number> {
    const count = await addUrlGroupEndpoints.run(
      this.redis,
      [this.keys.urlGroups],
      [name, options.now ?? Date.now(), JSON.stringify(endpoints), options.maxEndpoints, options.maxGroups],
    );
    return Number(count);
  }

  /** Returns the endpoints left (0: the group was deleted), or undefined when there is no such group. */
  async removeEndpoints(
    name: string,
    endpoints: readonly Partial<UrlGroupEndpoint>[],
    now = Date.now(),
  ): Promise<number | undefined> {
    const left = Number(
      await removeUrlGroupEndpoints.run(
        this.redis,
        [this.keys.urlGroups],
        [name, now, JSON.stringify(endpoints)],
      ),
    );
    return left < 0 ? undefined : left;
  }

  /** Returns whether the group existed. */
  async delete(name: string): Promise<boolean> {
    return (await this.redis.hdel(this.keys.urlGroups, name)) === 1;
  }
}
