import type { Client } from '@upstash/qstash';

/**
 * A nightly report, as a QStash user writes it: a URL group of the services that want the report,
 * and a schedule that posts to the group at 02:30 Berlin time. Running it again changes the same
 * schedule rather than adding a second one (Upstash-Schedule-Id).
 */
export async function scheduleNightlyReport(
  client: Client,
  endpoints: { billing: string; archive: string },
): Promise<string> {
  await client.urlGroups.addEndpoints({
    name: 'nightly-report',
    endpoints: [
      { name: 'billing', url: endpoints.billing },
      { name: 'archive', url: endpoints.archive },
    ],
  });
  const { scheduleId } = await client.schedules.create({
    scheduleId: 'nightly-report',
    destination: 'nightly-report',
    cron: 'CRON_TZ=Europe/Berlin 30 2 * * *',
    body: JSON.stringify({ report: 'daily-sales' }),
    retries: 3,
  });
  return scheduleId;
}
