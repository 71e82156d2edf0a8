/**
 * A change log that can also tell which changes a call recorded: fleet mode runs
 * an admin use-case once as a dry run to learn which configuration objects it
 * writes (replicated-writes.ts). Outside a capture it only passes changes on.
 */
import type { ChangeRecord } from '../events/change-record.js';
import type { ChangeLog } from '../ports.js';

export interface ChangeTap extends ChangeLog {
  /** Runs `fn` (synchronous: nothing else records meanwhile) and answers its result with the changes it recorded. */
  capture<T>(fn: () => T): { result: T; changes: ChangeRecord[] };
}

export function createChangeTap(inner: ChangeLog): ChangeTap {
  let captured: ChangeRecord[] | null = null;
  return {
    record(change) {
      // A capture is a dry run: its changes are learned, not written (nor counted) here.
      if (captured !== null) captured.push(change);
      else inner.record(change);
    },
    capture(fn) {
      const outer = captured;
      captured = [];
      try {
        const result = fn();
        return { result, changes: captured };
      } finally {
        captured = outer;
      }
    },
  };
}
