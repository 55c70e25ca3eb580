import { compareQuantities, InvalidQuantityError, parseQuantity } from '../../../api/quantity.js';

describe('quantities', () => {
  it('when binary, decimal, milli and exponent forms are parsed, then they give base units', () => {
    expect(parseQuantity('1Gi')).toBe(2 ** 30);
    expect(parseQuantity('512Mi')).toBe(512 * 2 ** 20);
    expect(parseQuantity('1G')).toBe(1e9);
    expect(parseQuantity('500m')).toBeCloseTo(0.5);
    expect(parseQuantity('2')).toBe(2);
    expect(parseQuantity('1e3')).toBe(1000);
    expect(parseQuantity('.5')).toBe(0.5);
  });

  it('when two quantities are compared, then units are taken into account', () => {
    expect(compareQuantities('1024Mi', '1Gi')).toBe(0);
    expect(compareQuantities('1G', '1Gi')).toBe(-1);
    expect(compareQuantities('1', '999m')).toBe(1);
  });

  it('when a value is not a quantity, then InvalidQuantityError names it', () => {
    expect(() => parseQuantity('5Gx')).toThrow(InvalidQuantityError);
    expect(() => parseQuantity('-1')).toThrow('"-1" is not a Kubernetes quantity');
  });
});
