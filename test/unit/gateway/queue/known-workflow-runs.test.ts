import {
  KnownWorkflowRuns,
  type KnownWorkflowRun,
} from '../../../../gateway/queue/stores/known-workflow-runs.js';

const RUN: KnownWorkflowRun = {
  createdAt: 1,
  config: { url: 'http://127.0.0.1:9/wf', headers: {}, retries: 0 },
  configSha: 'sha',
};

/** A config JSON of `bytes` UTF-8 bytes, of two-byte characters (its UTF-16 length is half that). */
const configOf = (bytes: number): string => 'é'.repeat(bytes / 2);

describe('the runs a replica knows', () => {
  it('when two bindings remember runs, then one byte cap holds for both, counted in UTF-8 bytes, the oldest going first', () => {
    const known = new KnownWorkflowRuns({ maxRuns: 100, maxBytes: 1000 });
    const [a, b] = [{}, {}];
    known.remember(a, 'run:1', RUN, configOf(400));
    known.remember(b, 'run:1', RUN, Buffer.from(configOf(400)));
    // Each binding alone is under the cap; together with this one they are over it.
    known.remember(b, 'run:2', RUN, configOf(400));
    expect(known.get(a, 'run:1')).toBeUndefined();
    expect(known.get(b, 'run:1')).toBe(RUN);
    expect(known.get(b, 'run:2')).toBe(RUN);
  });

  it('when two bindings remember runs, then one run cap holds for both, and the same run key of each is its own', () => {
    const known = new KnownWorkflowRuns({ maxRuns: 2, maxBytes: 1000 });
    const [a, b] = [{}, {}];
    const other = { ...RUN, createdAt: 2 };
    known.remember(a, 'run:1', RUN, '{}');
    known.remember(b, 'run:1', other, '{}');
    expect([known.get(a, 'run:1'), known.get(b, 'run:1')]).toEqual([RUN, other]);
    known.remember(a, 'run:2', RUN, '{}');
    expect([known.get(a, 'run:1'), known.get(b, 'run:1'), known.get(a, 'run:2')]).toEqual([
      undefined,
      other,
      RUN,
    ]);
  });
});
