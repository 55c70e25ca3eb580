import type { V1Node } from '@kubernetes/client-node';
import { isSchedulable } from '../../../local/nodes-schedulable.js';

function node(ready: string, taints: string[]): V1Node {
  return {
    spec: { taints: taints.map((key) => ({ key, effect: 'NoSchedule' })) },
    status: { conditions: [{ type: 'Ready', status: ready }] },
  };
}

describe('isSchedulable', () => {
  it.each([
    ['Ready and untainted', node('True', []), true],
    [
      "Ready, the API server's not-ready taint not lifted yet",
      node('True', ['node.kubernetes.io/not-ready']),
      false,
    ],
    ['not Ready', node('False', []), false],
    ['no status yet', { spec: {} } as V1Node, false],
    ['Ready with a taint of its own', node('True', ['dedicated']), true],
  ])('%s', (_what, given, expected) => {
    expect(isSchedulable(given)).toBe(expected);
  });
});
