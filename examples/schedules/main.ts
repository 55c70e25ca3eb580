import { Client } from '@upstash/qstash';
import { scheduleNightlyReport } from './nightly-report.js';

/**
 * Creates the nightly report schedule on a binding's queue and lists the schedules:
 *   VQUEUE_URL=... VQUEUE_TOKEN=... RECEIVER=http://127.0.0.1:3000 npx tsx examples/schedules/main.ts
 * (examples/receiver/main.ts is a receiver to point it at on the local platform).
 */
const { VQUEUE_URL, VQUEUE_TOKEN } = process.env;
if (!VQUEUE_URL || !VQUEUE_TOKEN) {
  console.error('set VQUEUE_URL and VQUEUE_TOKEN (from the binding’s env Secret)');
  process.exit(1);
}
const receiver = process.env.RECEIVER ?? 'http://127.0.0.1:3000';
const client = new Client({ baseUrl: VQUEUE_URL, token: VQUEUE_TOKEN });
const scheduleId = await scheduleNightlyReport(client, {
  billing: `${receiver}/billing/report`,
  archive: `${receiver}/archive/report`,
});
const schedule = await client.schedules.get(scheduleId);
console.log(JSON.stringify({ scheduleId, cron: schedule.cron, nextScheduleTime: schedule.nextScheduleTime }));
