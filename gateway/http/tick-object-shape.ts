import { createHook } from 'node:async_hooks';

let retained: object | undefined;

/**
 * Keeps one of Node's nextTick objects alive for the life of the process, so that V8 keeps the
 * hidden classes ("maps") of those objects. Why: Node builds each nextTick object with an object
 * literal keyed by two internal symbols, and V8's feedback for such keys knows no polymorphic
 * state: after the first map it has seen, any other map makes it megamorphic for good, and the
 * optimised nextTick then builds every object in V8's runtime. That happens whenever a full
 * garbage collection runs while no nextTick object is alive (the memory reducer does so a few
 * seconds into an idle period, e.g. between start-up and the first traffic) and the maps are
 * collected and rebuilt. Measured on the gateway: about 18 runtime calls per forwarded request,
 * a fifth of its CPU time; after 20 s idle (`BENCH_IDLE_SECONDS=20 npx tsx bench/gateway-proxy.ts`)
 * 0.82 of nginx's throughput with this, 0.75 without. A bare node:http proxy, with its small heap,
 * rarely gets there.
 *
 * Call early in start-up; it costs one object, and one async hook enabled for one nextTick.
 */
export function retainTickObjectShape(): void {
  if (retained !== undefined) return;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') retained ??= resource;
    },
  });
  hook.enable();
  process.nextTick(noop);
  hook.disable();
}

function noop(): void {}
