// @ts-expect-error -- a plain ES module of jest's configuration, without types.
import LongSuitesFirstModule from '../../helpers/long-suites-first.mjs';

const LongSuitesFirst = LongSuitesFirstModule as new (options: object) => {
  sort(tests: FakeTest[]): FakeTest[];
};

interface FakeTest {
  path: string;
  duration?: number;
  context: { config: { cache: boolean }; hasteFS: { getSize(path: string): number } };
}

/** Suites of a fresh clone as jest hands them to the sequencer: no timings, and a file size each. */
function freshClone(sizes: Record<string, number>): FakeTest[] {
  const context = { config: { cache: false }, hasteFS: { getSize: (path: string) => sizes[path] ?? 0 } };
  return Object.keys(sizes).map((path) => ({ path, context }));
}

describe('the long-suites-first test sequencer', () => {
  it('when jest has no timings, then the suites known to take minutes go first, longest first, and the rest keep jest order (largest file first)', () => {
    const tests = freshClone({
      '/clone/test/integration/local/run-lock.test.ts': 2_000,
      '/clone/test/e2e/queue/sdk-schedules.test.ts': 19_000,
      '/clone/test/e2e/chaos/chaos-soak.test.ts': 1_900,
      '/clone/test/e2e/console/console-browser.test.ts': 20_000,
      '/clone/test/integration/chart/values-schema.test.ts': 9_000,
    });
    expect(new LongSuitesFirst({}).sort(tests).map((test) => test.path)).toEqual([
      '/clone/test/e2e/chaos/chaos-soak.test.ts',
      '/clone/test/e2e/queue/sdk-schedules.test.ts',
      '/clone/test/e2e/console/console-browser.test.ts',
      '/clone/test/integration/chart/values-schema.test.ts',
      '/clone/test/integration/local/run-lock.test.ts',
    ]);
  });
});
