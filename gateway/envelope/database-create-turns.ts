/** Ends a turn: the next create of the same instance may count. Calling it twice is harmless. */
export type EndTurn = () => void;

/**
 * One database create at a time per free instance on this gateway process: each create counts the
 * instance's databases only once the create before it has been answered, so two racing creates
 * can no longer both pass the same count here. Across replicas the count is not shared, so with R
 * replicas an instance can end at most R - 1 databases over the limit (each replica passing one
 * create on the same count); docs/free-envelope.md says so. Creates are rare, so the wait costs
 * nothing in practice; reads and writes of documents never wait here.
 */
export class DatabaseCreateTurns {
  private readonly tails = new Map<string, Promise<void>>();

  /** Resolves when it is this create's turn; the caller must end it when the create is answered. */
  async take(instanceKey: string): Promise<EndTurn> {
    const before = this.tails.get(instanceKey) ?? Promise.resolve();
    let end!: () => void;
    const mine = new Promise<void>((resolve) => (end = resolve));
    const tail = before.then(() => mine);
    this.tails.set(instanceKey, tail);
    void tail.then(() => {
      if (this.tails.get(instanceKey) === tail) this.tails.delete(instanceKey);
    });
    await before;
    return end;
  }
}
