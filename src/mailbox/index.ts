/**
 * The mailbox room's face: an IMAP mailbox (imapflow) watched for new
 * messages, read in batches and filed, with a parser in a thread of its own.
 * Generic: what a message means (a bounce, a PEC receipt) is the handler's.
 */
export { openImapMailbox, type MailboxSession, type MailboxSettings } from './imap-mailbox.js';
export { parseWithin } from './mailbox-reading.js';
export {
  filedMessage,
  watchMailbox,
  type Handled,
  type MailboxHandler,
  type MailboxWatcher,
  type MessageToPlan,
  type WatcherConfig,
} from './mailbox-watcher.js';
export { createParserThread, type ParserThread } from './parser-thread.js';
