import { createGatewayMetrics } from '../../../gateway/metrics.js';

describe('createGatewayMetrics', () => {
  it('when requests are spliced, then each scrape reports the total so far', async () => {
    const metrics = createGatewayMetrics({ defaultMetrics: false });
    const spliced = async (): Promise<number | undefined> =>
      (await metrics.registry.getSingleMetric('settee_gateway_spliced_requests_total')?.get())?.values[0]
        ?.value;
    metrics.countSpliced();
    metrics.countSpliced();
    expect(await spliced()).toBe(2);
    metrics.countSpliced();
    expect(await spliced()).toBe(3);
    expect(await metrics.registry.metrics()).toContain('settee_gateway_spliced_requests_total 3');
  });
});
