import { describe, expect, it } from 'vitest';
import type { Account } from '../../../core/account/account.js';
import type { AccountState } from '../../../core/account/account-service.js';
import { viewAccountState } from './account-view.js';

const account: Account = {
  tenantId: 'acme',
  id: 'main',
  host: 'smtp.example',
  port: 587,
  user: 'u',
  password: 'secret',
  tlsMode: 'starttls',
  tlsRejectUnauthorized: true,
  limitPerMinute: 10,
  limitPerHour: null,
  limitPerDay: null,
  limitBehavior: 'defer',
  fallbackAccounts: [],
  failoverAfterSeconds: 60,
  warmUp: null,
  destinationLimits: [],
  maxConnections: 5,
  maxMessagesPerConnection: 100,
  isDefault: true,
  isPec: false,
  provider: null,
  imap: null,
  pausedAt: null,
  pausedReason: null,
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_000,
};

const activity: NonNullable<AccountState['activity']> = {
  usage: {
    minute: { used: 3, limit: 10, resetsAt: 1_700_000_040_000 },
    hour: { used: 3, limit: null, resetsAt: 1_700_002_800_000 },
    day: { used: 3, limit: null, resetsAt: 1_700_006_400_999 },
  },
  waiting: 7,
  connections: { open: 2, inUse: 1, max: 5 },
  attempts: {
    lastError: { text: '451 later', replyCode: 451, at: 1_699_999_999_500 },
    lastSuccessAt: 1_700_000_001_999,
  },
};

describe('the account as GET /accounts answers it', () => {
  it('is the contract alone when the daemon tells no activity, and never shows the password', () => {
    const view = viewAccountState({ account, activity: null });
    expect(view).not.toHaveProperty('usage');
    expect(JSON.stringify(view)).not.toContain('secret');
    expect(view).toMatchObject({ id: 'main', tenant_id: 'acme', has_password: true });
  });

  it('adds usage, waiting, connections and the last attempts in snake_case and epoch seconds, in that order', () => {
    const view = viewAccountState({ account, activity });
    expect(Object.keys(view).slice(-5)).toEqual(['usage', 'waiting', 'connections', 'last_error', 'last_success_ts']);
    expect(view.usage).toEqual({
      minute: { used: 3, limit: 10, resets_ts: 1_700_000_040 },
      hour: { used: 3, limit: null, resets_ts: 1_700_002_800 },
      day: { used: 3, limit: null, resets_ts: 1_700_006_400 },
    });
    expect(view.connections).toEqual({ open: 2, in_use: 1, max: 5 });
    expect(view.last_error).toEqual({ text: '451 later', reply_code: 451, at_ts: 1_699_999_999 });
    expect(view.last_success_ts).toBe(1_700_000_001);
  });

  it('leaves the last attempts out when the delivery side keeps none', () => {
    const { attempts: _none, ...withoutAttempts } = activity;
    const view = viewAccountState({ account, activity: withoutAttempts });
    expect(view).not.toHaveProperty('last_error');
    expect(view).not.toHaveProperty('last_success_ts');
  });
});
