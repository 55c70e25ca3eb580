/** A request already sent, the status it must be answered with, and what its error must match. */
export type ErrorAnswerCase = [answer: Promise<Response>, status: number, error: RegExp];

/**
 * Checks each answer's status and its QStash-shaped error body (`{"error": "..."}`), in order:
 * the requests may all be sent at once, and a failure names the status and error of the one case.
 */
export async function expectErrorAnswers(cases: readonly ErrorAnswerCase[]): Promise<void> {
  // Every request is settled first: a failed early case must not leave a later one's rejection unhandled.
  await Promise.allSettled(cases.map(([answer]) => answer));
  for (const [answer, status, error] of cases) {
    const answered = await answer;
    expect({
      status: answered.status,
      error: ((await answered.json()) as { error: string }).error,
    }).toEqual({
      status,
      error: expect.stringMatching(error),
    });
  }
}
