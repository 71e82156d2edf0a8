/**
 * What a NATS failure was, read off nats.js's error classes rather than their messages: the
 * answers the mirror and the fleet act on (a compare-and-set lost, a stream not there yet, no
 * server took the request). nats.js wraps the first cause (a request's
 * NoRespondersError in a RequestError, that in JetStreamNotEnabled), so causes are followed.
 */
import { NoRespondersError } from '@nats-io/nats-core';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';

/** A wrapped cause is a few levels deep at most; the bound keeps a cycle of causes from looping. */
const MAX_CAUSES = 8;

function* causes(error: unknown): Generator<unknown> {
  let current = error;
  for (let depth = 0; depth < MAX_CAUSES && current !== undefined && current !== null; depth += 1) {
    yield current;
    current = current instanceof Error ? current.cause : undefined;
  }
}

/** The JetStream API's error code (`err_code`) of a refusal, when the error is one. */
function jetStreamApiCode(error: unknown): number | null {
  for (const cause of causes(error)) if (cause instanceof JetStreamApiError) return cause.code;
  return null;
}

/**
 * JetStream's "wrong last sequence": the subject moved since the expected sequence was read (a
 * compare-and-set lost). 10071, and 10164, the constant form newer servers (2.11 on) answer with
 * when two writes to one key race in a cluster; its description reads "wrong last sequence" too.
 */
export const isWrongLastSequence = (error: unknown): boolean => {
  const code = jetStreamApiCode(error);
  return (
    code === JetStreamApiCodes.StreamWrongLastSequence || code === JetStreamApiCodes.StreamWrongLastSequenceUnknown
  );
};

/** The JetStream API answered 404: what was asked for (a stream, a message) is not there. */
export const isNotFound = (error: unknown): boolean => {
  for (const cause of causes(error)) if (cause instanceof JetStreamApiError) return cause.status === 404;
  return false;
};

/** The stream asked about does not exist (10059). */
export const isStreamNotFound = (error: unknown): boolean =>
  jetStreamApiCode(error) === JetStreamApiCodes.StreamNotFound;

/** No server subscribed to the subject took the request (a stream with no leader yet): nothing was done. */
export const isNoResponders = (error: unknown): boolean => {
  for (const cause of causes(error)) if (cause instanceof NoRespondersError) return true;
  return false;
};
