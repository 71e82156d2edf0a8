/** Types of nats-cluster.mjs (plain JavaScript, shared with bench/). */
export interface ClusterServer {
  readonly name: string;
  readonly url: string;
  readonly pid: number | null;
  /** The monitoring port (`/connz`, `/jsz`), on 127.0.0.1. */
  readonly monitor: number;
  /** SIGKILL: no goodbye to the cluster, as a crashed machine. */
  kill(): Promise<void>;
  /** Starts again on the same ports and store. */
  start(): void;
}

export interface NatsCluster {
  readonly servers: readonly ClusterServer[];
  /** Every server's client URL, comma-separated: what a daemon's `nats.url` takes. */
  readonly urls: string;
  /** Waits for a JetStream meta leader that sees every running server, and every replicated stream with its replicas current. */
  ready(): Promise<void>;
  destroy(): Promise<void>;
}

export function startNatsCluster(size?: number): Promise<NatsCluster>;
