/**
 * The drain's gate on intake: the requests that passed it and are not yet answered, so that a
 * drain waits for them (they commit here, and are drained too) before it reads what waits.
 */
export class IntakeGate {
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];

  /** Runs a request that passed the gate. */
  async through<T>(run: () => Promise<T>): Promise<T> {
    this.inFlight += 1;
    try {
      return await run();
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) for (const resolve of this.waiting.splice(0)) resolve();
    }
  }

  /** Resolves once every request that passed the gate has been answered. */
  settled(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.waiting.push(resolve));
  }
}
