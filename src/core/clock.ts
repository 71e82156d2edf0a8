/** Ports for time and identity: core never reads the clock or randomness itself. */

export interface Clock {
  /** Current instant, UTC epoch milliseconds. */
  now(): number;
}

export interface IdSource {
  /** A new globally unique id (UUID) for events and audit entries. */
  uuid(): string;
}
