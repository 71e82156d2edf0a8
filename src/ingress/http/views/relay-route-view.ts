/**
 * An account's pace after pushback and its failover, as the API shows them: GET /status lists them
 * with their tenant and account, GET /accounts puts them on each account.
 */
import { epochSeconds } from '../../../core/index.js';
import { shownPace, type AccountFailover, type AccountPace } from '../../../core/delivery/index.js';

export const viewPace = (pace: AccountPace) => ({
  per_minute: shownPace(pace.perMinute),
  // Rounded up: the next send may not go before that whole second.
  next_ts: Math.ceil(pace.nextAt / 1000),
  since_ts: epochSeconds(pace.since) ?? 0,
  pushbacks: pace.pushbacks,
});

export const viewFailover = (route: AccountFailover) => ({
  via_account_id: route.via,
  cause: route.cause,
  since_ts: epochSeconds(route.since) ?? 0,
});
