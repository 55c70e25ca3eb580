import type { Condition, ConditionStatus } from '../../api/conditions.js';

export interface ConditionUpdate {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
}

/**
 * Merges freshly computed conditions into the previous ones, following the API conventions: the
 * lastTransitionTime moves only when a condition's status changes, and every condition carries
 * the generation it was computed from. Conditions of other types are kept.
 */
export function mergeConditions(options: {
  previous: readonly Condition[] | undefined;
  updates: readonly ConditionUpdate[];
  generation: number | undefined;
  now: string;
}): Condition[] {
  const previous = options.previous ?? [];
  const updatedTypes = new Set(options.updates.map((update) => update.type));
  const merged = options.updates.map((update): Condition => {
    const before = previous.find((condition) => condition.type === update.type);
    return {
      ...update,
      lastTransitionTime: before && before.status === update.status ? before.lastTransitionTime : options.now,
      ...(options.generation !== undefined ? { observedGeneration: options.generation } : {}),
    };
  });
  return [...merged, ...previous.filter((condition) => !updatedTypes.has(condition.type))];
}
