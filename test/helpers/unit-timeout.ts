import { jest } from '@jest/globals';

// Unit tests start no server and wait on nothing outside their process: one that takes longer than
// this is stuck, and failing it in 10 s beats the 60 s the integration and e2e projects need.
jest.setTimeout(10_000);
