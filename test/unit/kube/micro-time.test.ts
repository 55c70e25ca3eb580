import { formatMicroTime } from '../../../kube/micro-time.js';

describe('formatMicroTime', () => {
  it('when a date is formatted, then it has exactly six fractional digits as metav1.MicroTime requires', () => {
    expect(formatMicroTime(new Date('2025-03-04T05:06:07.089Z'))).toBe('2025-03-04T05:06:07.089000Z');
  });
});
