import type { Logger } from 'winston';
import { isConflict, toKubeApiError } from '../../../kube/errors.js';

/** The rule a Scale write needs, as the chart's operator role grants it (_rbac-rules.tpl). */
export const SCALE_RBAC_RULE = 'apiGroups ["apps"], resources ["statefulsets/scale"], verbs ["patch"]';

let forbiddenWarned = false;

/**
 * Whether a failed apply of a StatefulSet's Scale is made again as an apply of the whole object,
 * which sets the replicas as well: on a conflict (someone wrote it since the cache's version), and
 * on Forbidden, an operator run with a role from before it wrote Scales (no patch on
 * statefulsets/scale), which the whole apply does not need: without it every wake would fail. The
 * first Forbidden of the process logs a warning naming the missing rule. Anything else fails the
 * reconcile.
 */
export function appliesWholeAfterScaleFailure(err: unknown, logger: Logger): boolean {
  if (isConflict(err)) return true;
  if (toKubeApiError(err)?.statusCode !== 403) return false;
  if (!forbiddenWarned) {
    forbiddenWarned = true;
    logger.warn(
      "the operator's role may not patch statefulsets/scale: wakes and hibernations apply the whole StatefulSet instead (slower); grant the rule the chart's role has",
      { rule: SCALE_RBAC_RULE },
    );
  }
  return true;
}
