// What the figures were measured with, recorded beside them: the commit, Node, SQLite (as
// better-sqlite3 builds it), nats-server and Dovecot. A tool that is missing is recorded as null.
import { execFileSync } from 'node:child_process';
import Database from 'better-sqlite3';

const output = (file, args) => {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch {
    return null;
  }
};

export function versions() {
  const db = new Database(':memory:');
  const sqlite = db.prepare('SELECT sqlite_version()').pluck().get();
  db.close();
  return {
    commit: output('git', ['rev-parse', '--short', 'HEAD']),
    node: process.version,
    sqlite,
    natsServer: output('nats-server', ['--version']) ?? output('/usr/sbin/nats-server', ['--version']),
    dovecot: output('/usr/sbin/dovecot', ['--version']) ?? output('dovecot', ['--version']),
  };
}
