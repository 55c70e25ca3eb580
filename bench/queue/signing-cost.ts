import { createDeliverySigner } from '../../gateway/queue/workers/signer.js';

/** What signing one delivery of `body` with `signingKey` costs, in µs (a loop of 20,000 after a warm-up). */
export function signingCostUs(signingKey: string, body: Buffer): number {
  const signer = createDeliverySigner(signingKey);
  for (let i = 0; i < 2_000; i++) signer.sign({ destination: 'https://a.example/hook', body });
  const count = 20_000;
  const started = performance.now();
  for (let i = 0; i < count; i++) signer.sign({ destination: 'https://a.example/hook', body });
  return ((performance.now() - started) * 1_000) / count;
}
