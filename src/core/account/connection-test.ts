/**
 * An account's connection test (EHLO, STARTTLS, AUTH, QUIT; no MAIL FROM) read from the
 * conversation's transcript: each step with its reply and its time, the step that failed
 * named as a paused account's reason names it (delivery-outcome.ts). Pure: the adapter
 * (delivery/relay-probe.ts) talks SMTP and hands the transcript over.
 */
import { describe as describeFailure } from '../delivery/delivery-outcome.js';
import type { RelayReply, RelayStage } from '../delivery/relay.js';

export type ConnectionStep = 'connect' | 'ehlo' | 'starttls' | 'auth' | 'quit';

/** A server reply as RFC 5321 §4.2 and RFC 3463 shape it. */
export interface StepReply {
  replyCode: number | null;
  enhancedStatus: string | null;
  text: string;
}

export interface StepResult {
  step: ConnectionStep;
  ok: boolean;
  /** The final reply of the step; null when none came (refused, timed out, closed). */
  reply: StepReply | null;
  durationMs: number;
}

/** The TLS the connection ended up with (implicit or after STARTTLS). */
export interface TlsReport {
  version: string | null;
  cipher: string | null;
  /**
   * `trusted`: the chain verified; `untrusted`: it did not, accepted because the account turns
   * verification off; `rejected`: it did not, and the connection was refused for it.
   */
  certificate: 'trusted' | 'untrusted' | 'rejected';
  certificateError: string | null;
}

export interface ConnectionTestResult {
  ok: boolean;
  /** The step that failed; null when every step passed. */
  failedStep: ConnectionStep | null;
  /** The failure in a line, its step named (`AUTH: 535 5.7.8 ...`); null on success. */
  reason: string | null;
  /** Where the relay conversation stopped, as delivery classifies it; null on success. */
  stage: RelayStage | null;
  errorCode: string | null;
  steps: StepResult[];
  tls: TlsReport | null;
  durationMs: number;
}

/** One line of the conversation, in order, with the instant it was seen. */
export type TranscriptLine = { at: number; from: 'client' | 'server'; text: string };

type Failure = Extract<RelayReply, { ok: false }>;

const STEP_LABEL: Record<ConnectionStep, string> = {
  connect: 'connect',
  ehlo: 'EHLO',
  starttls: 'STARTTLS',
  auth: 'AUTH',
  quit: 'QUIT',
};
const REPLY = /^([2-5]\d\d)(?:[ -]+([245]\.\d{1,3}\.\d{1,3})(?!\S))?/;

function stepOfCommand(command: string): ConnectionStep | null {
  const verb = command.trimStart().split(/\s/, 1)[0]?.toUpperCase() ?? '';
  if (verb === 'EHLO' || verb === 'HELO' || verb === 'LHLO') return 'ehlo';
  if (verb === 'STARTTLS') return 'starttls';
  if (verb === 'AUTH') return 'auth';
  if (verb === 'QUIT') return 'quit';
  return null; // an AUTH continuation (LOGIN's base64 lines): still the AUTH step
}

function replyOf(text: string): StepReply {
  const last = text.split(/\r?\n/).pop() ?? '';
  const match = REPLY.exec(last);
  return { replyCode: match?.[1] ? Number(match[1]) : null, enhancedStatus: match?.[2] ?? null, text: text.trim() };
}

/** 2yz completes a step; 3yz (AUTH's 334) asks for more of it. */
const positive = (reply: StepReply): boolean => reply.replyCode !== null && reply.replyCode < 400;
const intermediate = (reply: StepReply): boolean =>
  reply.replyCode !== null && reply.replyCode >= 300 && reply.replyCode < 400;

interface OpenStep {
  step: ConnectionStep;
  startedAt: number;
  reply: StepReply | null;
  endedAt: number | null;
}

/**
 * The steps of a transcript. A step runs from its command (the test's start for `connect`:
 * TCP, implicit TLS and the greeting) to its final reply; STARTTLS runs on to the next
 * command, so that its time includes the TLS handshake its 220 starts.
 */
function stepsOf(lines: readonly TranscriptLine[], startedAt: number): OpenStep[] {
  const steps: OpenStep[] = [{ step: 'connect', startedAt, reply: null, endedAt: null }];
  for (const line of lines) {
    const current = steps[steps.length - 1] as OpenStep;
    if (line.from === 'server') {
      const reply = replyOf(line.text);
      current.reply = reply;
      if (!intermediate(reply)) current.endedAt = line.at;
      continue;
    }
    const step = stepOfCommand(line.text);
    if (step === null && current.step === 'auth') continue;
    if (current.step === 'starttls' && current.reply !== null && positive(current.reply)) current.endedAt = line.at;
    steps.push({ step: step ?? 'auth', startedAt: line.at, reply: null, endedAt: null });
  }
  return steps;
}

/** `AUTH: 535 5.7.8 ...`, `connect: timeout: ...`; a stage the step already names is not said twice (`connect: connect ECONNREFUSED ...`). */
function reasonOf(step: ConnectionStep, failure: Failure): string {
  const described = describeFailure(failure);
  const repeated = failure.stage === step && described.startsWith(`${step}: `);
  return `${STEP_LABEL[step]}: ${repeated ? described.slice(step.length + 2) : described}`;
}

/**
 * The result of a test from its transcript and, when it failed, the failure as the relay
 * reads it (relay-failure.ts): the failed step is the one left without a final reply, or
 * else the last one, whose reply was the refusal.
 */
export function connectionTestResult(input: {
  startedAt: number;
  endedAt: number;
  lines: readonly TranscriptLine[];
  failure: Failure | null;
  tls: TlsReport | null;
}): ConnectionTestResult {
  const { startedAt, endedAt, failure } = input;
  const open = stepsOf(input.lines, startedAt);
  const failedIndex = failure === null ? -1 : open.length - 1;
  const steps = open.map((step, index) => ({
    step: step.step,
    ok: index !== failedIndex && step.reply !== null && positive(step.reply),
    reply: step.reply,
    durationMs: Math.max(0, (step.endedAt ?? endedAt) - step.startedAt),
  }));
  const failedStep = failure === null ? null : (steps[failedIndex]?.step ?? 'connect');
  return {
    ok: failure === null,
    failedStep,
    reason: failure === null || failedStep === null ? null : reasonOf(failedStep, failure),
    stage: failure?.stage ?? null,
    errorCode: failure?.errorCode ?? null,
    steps,
    tls: input.tls,
    durationMs: Math.max(0, endedAt - startedAt),
  };
}
