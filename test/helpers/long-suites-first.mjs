// Jest's own order runs the suites it has timings for longest first, and the others by file size,
// largest first. CI runs a fresh clone, which has no timings: the two-minute chaos soak, a 41-line
// file, then started last and ran alone for over two minutes while the other worker had nothing
// left. The suite times of the three CI runs of 2026-11-27 (jest 947-1,057 s), replayed on two
// workers, give 1,046-1,068 s in size order and 953-992 s with the soak first. Suites known to take
// over a minute go first when jest has no timing for them; with timings, jest's order stands.
import Sequencer from '@jest/test-sequencer';

const LONG_SUITES = [
  'test/e2e/chaos/chaos-soak.test.ts',
  'test/integration/operator/backups/couch-backup-hibernation.test.ts',
  'test/e2e/local/make-run-robustness.test.ts',
  'test/integration/operator/backups/couch-backup.test.ts',
  'test/e2e/queue/sdk-schedules.test.ts',
];

function longRank(test) {
  const rank = LONG_SUITES.findIndex((suite) => test.path.endsWith(suite));
  return rank === -1 ? LONG_SUITES.length : rank;
}

class LongSuitesFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const untimedLong = sorted.filter((test) => test.duration == null && longRank(test) < LONG_SUITES.length);
    untimedLong.sort((a, b) => longRank(a) - longRank(b));
    return [...untimedLong, ...sorted.filter((test) => !untimedLong.includes(test))];
  }
}

export default LongSuitesFirst;
