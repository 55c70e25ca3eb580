import { InterruptibleSleep } from '../../../../kube/controller-runtime/interruptible-sleep.js';

describe('an interruptible sleep', () => {
  it('when nothing interrupts it, then it ends after its time', async () => {
    const waits = new InterruptibleSleep();
    const start = Date.now();
    await waits.sleep(50);
    expect(Date.now() - start).toBeGreaterThanOrEqual(45);
  });

  it('when it is interrupted, then it ends at once rather than after its time', async () => {
    const waits = new InterruptibleSleep();
    const start = Date.now();
    const sleeping = waits.sleep(60_000);
    setTimeout(() => waits.interrupt(), 10);
    await sleeping;
    expect(Date.now() - start).toBeLessThan(5_000);
  });

  it('when interrupt is called with no sleep under way, then the next sleep still lasts its time', async () => {
    const waits = new InterruptibleSleep();
    waits.interrupt();
    await waits.sleep(1);
    waits.interrupt();
    let ended = false;
    const sleeping = waits.sleep(200).then(() => (ended = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ended).toBe(false);
    waits.interrupt();
    await sleeping;
    expect(ended).toBe(true);
  });
});
