import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { ObjectClient, type ApplyOptions } from '../../../../kube/apply.js';
import { DONE } from '../../../../kube/controller-runtime/reconciler.js';
import { RecentWrites } from '../../../../kube/controller-runtime/recent-writes.js';
import { makeKubeClients } from '../../../../kube/clients.js';
import { waitFor } from '../../../../local/wait.js';
import { OwnedObjects } from '../../../../operator/controllers/couch-instance/owned-objects.js';
import {
  controllerTestbed,
  ROUND_TRIP_MS,
  type ControllerTestbed,
} from '../../../helpers/controller-testbed.js';
import { testControlPlane, useTestNamespace } from '../../../helpers/kube.js';
import { testLogger } from '../../../helpers/test-logger.js';

/** Events that cost fewer reconciles than there are events: a controller's own writes, and bursts. */
const namespace = useTestNamespace('fewer-reconciles');

describe('Controller: fewer reconciles than events', () => {
  let test = 0;
  let bed: ControllerTestbed;
  afterEach(async () => {
    await bed.stop();
  });

  const ownedSecret = (name: string, owner: string) => ({
    metadata: { name: bed.prefix + name, labels: { 'settee.dev/instance': bed.prefix + owner } },
    stringData: { k: 'v' },
  });
  /**
   * Creates a Secret owned by `woken` (reconciled once already) and waits for woken's reconcile of
   * it: one watch delivers the Secrets' events in order, so every earlier Secret event was handled.
   */
  const otherOwnerReconciled = async () => {
    await bed
      .core()
      .createNamespacedSecret({ namespace: namespace.name, body: ownedSecret('other', 'woken') });
    await waitFor(
      'the owner of the other Secret reconciled',
      async () => (bed.reconciler.callsFor(bed.key('woken')).length >= 2 ? true : undefined),
      { timeoutMs: ROUND_TRIP_MS },
    );
  };

  describe('with a stand-in for own writes (Secrets named own-*)', () => {
    beforeEach(() => {
      const group = `t${++test}`;
      bed = controllerTestbed({
        namespace: namespace.name,
        group,
        childSource: (informer, toOwner) => ({
          informer,
          toKeys: toOwner,
          isOwnWrite: (object) => object.metadata?.name?.startsWith(`${group}-own-`) ?? false,
        }),
      });
    });

    it('when an owned object is the controller’s own write, then its add and update wake no reconcile, and its delete does', async () => {
      await Promise.all([bed.parent('quiet'), bed.parent('woken')]);
      await bed.run();
      await waitFor(
        'the first reconciles',
        async () => (bed.reconciler.calls.length >= 2 ? true : undefined),
        {
          timeoutMs: ROUND_TRIP_MS,
        },
      );
      await bed
        .core()
        .createNamespacedSecret({ namespace: namespace.name, body: ownedSecret('own-1', 'quiet') });
      await bed.core().replaceNamespacedSecret({
        namespace: namespace.name,
        name: `${bed.prefix}own-1`,
        body: { ...ownedSecret('own-1', 'quiet'), stringData: { k: 'changed' } },
      });
      // One watch delivers the Secrets' events in order: once this one's reconcile ran, the own
      // write's events were handled before it.
      await otherOwnerReconciled();
      expect(bed.reconciler.callsFor(bed.key('quiet'))).toHaveLength(1);
      await bed.core().deleteNamespacedSecret({ namespace: namespace.name, name: `${bed.prefix}own-1` });
      await waitFor(
        'the owner reconciled for its deleted Secret',
        async () => (bed.reconciler.callsFor(bed.key('quiet')).length >= 2 ? true : undefined),
        { timeoutMs: ROUND_TRIP_MS },
      );
    });

    it('when one object changes in a burst while its reconcile is slow, then reconciles of it never overlap and the burst collapses', async () => {
      await bed.parent('busy');
      // The burst's first reconcile is held until the informer has delivered the whole burst, so
      // every later change of the burst arrives while it runs, whatever the machine's load.
      let letGo!: () => void;
      const held = new Promise<void>((resolve) => (letGo = resolve));
      bed.reconciler.behaviour = async (_key, _ctx, call) => {
        if (call === 1) await held;
        return DONE;
      };
      let burstDelivered = false;
      bed.parentInformer.onEvent((event) => {
        if (
          event.object.metadata?.name === `${bed.prefix}busy` &&
          event.object.metadata.annotations?.touch === '9'
        )
          burstDelivered = true;
      });
      let whileHeld = 0;
      try {
        await bed.run();
        await waitFor(
          'the initial reconcile',
          async () => (bed.reconciler.callsFor(bed.key('busy')).length >= 1 ? true : undefined),
          { timeoutMs: 10_000 },
        );
        for (let i = 0; i < 10; i += 1) await bed.annotate('busy', String(i));
        await waitFor('the burst delivered', async () => (burstDelivered ? true : undefined), {
          timeoutMs: 10_000,
        });
        await waitFor(
          'a reconcile for the burst',
          async () => (bed.reconciler.callsFor(bed.key('busy')).length >= 2 ? true : undefined),
          { timeoutMs: 10_000 },
        );
        whileHeld = bed.reconciler.callsFor(bed.key('busy')).length;
      } finally {
        letGo();
      }
      // While the held reconcile ran, no other reconcile of the bed.key started beside it.
      expect(whileHeld).toBe(2);
      // The changes that came while it ran collapse into one more reconcile (not up to 10): a change
      // made after it is the fourth, which the 9 instant reconciles of an uncollapsed burst would precede.
      await waitFor(
        'the collapsed reconcile',
        async () => (bed.reconciler.callsFor(bed.key('busy')).length >= 3 ? true : undefined),
        {
          timeoutMs: 10_000,
        },
      );
      const changedAt = Date.now();
      await bed.annotate('busy', 'after');
      await waitFor(
        'the reconcile of the later change',
        async () =>
          bed.reconciler.callsFor(bed.key('busy')).some((c) => c.at >= changedAt) ? true : undefined,
        {
          timeoutMs: 10_000,
        },
      );
      expect(bed.reconciler.overlaps).toBe(0);
      expect(bed.reconciler.callsFor(bed.key('busy'))).toHaveLength(4);
    });
  });

  describe("with the couch-instance controller's OwnedObjects", () => {
    let owned: OwnedObjects;
    /** Names of Secrets whose apply answers only once the informer delivered their event, and what runs between. */
    const heldAnswers = new Map<string, () => Promise<void>>();

    /**
     * The real server-side apply, whose answer is handed back only after the Secret's watch event
     * (the answered version in the informer's cache), and after `beforeAnswer` for the Secret: the
     * order in which an own write's event is easiest to take for someone else's.
     */
    class AnswerAfterTheEvent extends ObjectClient {
      override async apply<T extends KubernetesObject>(desired: T, options?: ApplyOptions): Promise<T> {
        const answer = await super.apply(desired, options);
        const name = answer.metadata?.name ?? '';
        const beforeAnswer = heldAnswers.get(name);
        if (!beforeAnswer) return answer;
        await waitFor(
          'the applied version in the cache',
          async () =>
            bed.children.get({ namespace: namespace.name, name })?.metadata?.resourceVersion ===
            answer.metadata?.resourceVersion
              ? true
              : undefined,
          { timeoutMs: ROUND_TRIP_MS },
        );
        await beforeAnswer();
        return answer;
      }
    }

    beforeEach(() => {
      const kubeConfig = testControlPlane().kubeConfig;
      const objects = kubeConfig.makeApiClient(AnswerAfterTheEvent);
      heldAnswers.clear();
      owned = new OwnedObjects(
        { ...makeKubeClients(kubeConfig), objects },
        new RecentWrites(),
        testLogger('owned-objects'),
      );
      bed = controllerTestbed({
        namespace: namespace.name,
        group: `t${++test}`,
        childSource: (informer, toOwner) => owned.watchSource(informer, toOwner),
      });
    });

    it("when reconciles apply owned objects through OwnedObjects, then their watch events wake no second reconcile of their owners, whether the event comes before or after the apply's answer; a change by someone else while the apply waits for its answer does", async () => {
      const answered = ['answered0', 'answered1', 'answered2'];
      const eventFirst = ['event-first0', 'event-first1', 'event-first2'];
      const quiet = [...answered, ...eventFirst];
      const secretName = (owner: string) => `${bed.prefix}applied-${owner}`;
      for (const owner of eventFirst) heldAnswers.set(secretName(owner), async () => undefined);
      // Someone else labels the Secret after the apply landed and before its answer: that event must wake its owner.
      heldAnswers.set(secretName('edited'), async () => {
        const edited = await bed.core().patchNamespacedSecret({
          namespace: namespace.name,
          name: secretName('edited'),
          body: [{ op: 'add', path: '/metadata/annotations', value: { edited: 'by hand' } }],
        });
        await waitFor(
          'the hand edit in the cache',
          async () =>
            bed.children.get({ namespace: namespace.name, name: secretName('edited') })?.metadata
              ?.resourceVersion === edited.metadata?.resourceVersion
              ? true
              : undefined,
          { timeoutMs: ROUND_TRIP_MS },
        );
      });
      await Promise.all([...quiet, 'edited', 'woken'].map((name) => bed.parent(name)));
      let applied = 0;
      bed.reconciler.behaviour = async (key, _ctx, call) => {
        const owner = [...quiet, 'edited'].find((q) => bed.key(q) === key);
        if (owner && call === 0) {
          const secret = ownedSecret(`applied-${owner}`, owner);
          const desired: V1Secret = {
            apiVersion: 'v1',
            kind: 'Secret',
            ...secret,
            metadata: { ...secret.metadata, namespace: namespace.name },
          };
          await owned.apply(key, bed.children, desired);
          applied += 1;
        }
        return DONE;
      };
      await bed.run();
      await waitFor(
        'the owned Secrets applied',
        async () => (applied === quiet.length + 1 ? true : undefined),
        {
          timeoutMs: ROUND_TRIP_MS,
        },
      );
      await waitFor(
        'the owner of the Secret edited by hand reconciled again',
        async () => (bed.reconciler.callsFor(bed.key('edited')).length >= 2 ? true : undefined),
        { timeoutMs: ROUND_TRIP_MS },
      );
      // One watch delivers the Secrets' events in order: once this one's reconcile ran, the applied
      // Secrets' events were handled before it (and every answer came before it was created).
      await otherOwnerReconciled();
      const reconciles = Object.fromEntries(
        quiet.map((q) => [q, bed.reconciler.callsFor(bed.key(q)).length]),
      );
      expect(reconciles).toEqual(Object.fromEntries(quiet.map((q) => [q, 1])));
    });
  });
});
