/**
 * How many tool calls and resource reads an agent may make: a bucket per caller (a digest of the
 * credential) that holds a minute's worth and refills evenly, so a burst is allowed and a loop is
 * not. An agent that runs away costs the daemon as a runaway script would; the API's own clients
 * are not limited by this. Pure: the time is given.
 */
export interface CallLimit {
  /** Calls a minute; 0: no limit. */
  readonly perMinute: number;
  /** 0 when the call may go ahead (and is counted); otherwise the seconds until one may. */
  take(caller: string, now: number): number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets kept before full ones are forgotten (a full bucket is what a new caller starts with). */
const SWEEP_AT = 10_000;

/** `perMinute` 0: no limit. */
export function callLimit(perMinute: number): CallLimit {
  if (perMinute <= 0) return { perMinute: 0, take: () => 0 };
  const buckets = new Map<string, Bucket>();
  const perMs = perMinute / 60_000;
  const refilled = (bucket: Bucket, now: number): number =>
    Math.min(perMinute, bucket.tokens + Math.max(0, now - bucket.at) * perMs);

  const sweep = (now: number): void => {
    for (const [caller, bucket] of buckets) if (refilled(bucket, now) >= perMinute) buckets.delete(caller);
  };

  return {
    perMinute,
    take(caller, now) {
      if (buckets.size >= SWEEP_AT) sweep(now);
      const bucket = buckets.get(caller) ?? { tokens: perMinute, at: now };
      const tokens = refilled(bucket, now);
      if (tokens < 1) return Math.max(1, Math.ceil((1 - tokens) / perMs / 1000));
      buckets.set(caller, { tokens: tokens - 1, at: now });
      return 0;
    },
  };
}
