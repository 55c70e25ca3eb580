import type { Logger } from 'winston';
import { isConflict, toKubeApiError } from '../../../kube/errors.js';

/** The rule a Scale write needs, as the chart's operator role grants it (_rbac-rules.tpl). */
export const SCALE_RBAC_RULE = 'apiGroups ["apps"], resources ["statefulsets/scale"], verbs ["patch"]';

/**
 * RBAC's refusal of the Scale write, as the API server words it (responsewriters.forbiddenMessage):
 * `statefulsets.apps "x" is forbidden: User "..." cannot patch resource "statefulsets/scale" in API
 * group "apps" in the namespace "ns"`. An admission webhook or policy denies with 403 as well.
 */
const RBAC_SCALE_REFUSAL = 'cannot patch resource "statefulsets/scale"';

/**
 * Whether a wake's or hibernation's replicas are written through the StatefulSet's Scale, and what
 * a failed Scale write does. A failed one is made again as an apply of the whole object, which sets
 * the replicas as well: on a conflict (someone wrote it since the cache's version), and on
 * Forbidden, an operator run with a role from before it wrote Scales (no patch on
 * statefulsets/scale), which the whole apply does not need: without it every wake would fail.
 * Anything else fails the reconcile. RBAC's refusal is kept for the process (one per reconciler):
 * otherwise every later wake and hibernation would pay a refused request before its whole apply.
 * Any other Forbidden (a webhook's or a policy's denial of one tenant's write) falls back for that
 * write only: kept, it would turn Scale writes off for every instance. The first refusal logs a
 * warning naming the missing rule; from then until the operator restarts (a role granted meanwhile
 * counts from then) no Scale write is tried.
 */
export class ScaleFallback {
  private forbidden = false;

  constructor(private readonly logger: Logger) {}

  /** False once the role has refused a Scale write: the whole StatefulSet is applied at once. */
  triesScale(): boolean {
    return !this.forbidden;
  }

  appliesWholeAfterScaleFailure(err: unknown): boolean {
    if (isConflict(err)) return true;
    const failure = toKubeApiError(err);
    if (failure?.statusCode !== 403) return false;
    if (!failure.message.includes(RBAC_SCALE_REFUSAL)) return true;
    if (!this.forbidden) {
      this.forbidden = true;
      this.logger.warn(
        "the operator's role may not patch statefulsets/scale: until the operator restarts, wakes and hibernations apply the whole StatefulSet instead (slower); grant the rule the chart's role has, then restart it",
        { rule: SCALE_RBAC_RULE },
      );
    }
    return true;
  }
}
