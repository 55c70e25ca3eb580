import { createUpstreamAgent } from '../../../../gateway/proxy/upstream-agent.js';

describe('createUpstreamAgent', () => {
  it('when asked for a pool, then it gets an undici Agent that can dispatch', async () => {
    const agent = createUpstreamAgent({ connections: 4, idleTimeoutMs: 1_000, headersTimeoutMs: 1_000 });
    expect(typeof agent.dispatch).toBe('function');
    await agent.close();
  });
});
