/** A running resplock server, from startServer(). */
export interface ResplockServer {
  host: string;
  port: number;
  url: string;
  unixSocket: string;
  /** Options for `new Redis(options)` (ioredis). */
  ioredis: { host: string; port: number };
  /** Options for `createClient(options)` (node-redis). */
  nodeRedis: { url: string };
  /** Any command on a fresh connection (no handshake). */
  command(...args: Array<string | number>): Promise<unknown>;
  clock: {
    get(): Promise<number>;
    advance(ms: number): Promise<number>;
    set(unixMs: number): Promise<number>;
    freeze(): Promise<number>;
    resume(): Promise<number>;
    reset(): Promise<number>;
  };
  fault(kind: string, ...args: Array<string | number | { command?: string; match?: string; client?: number; count?: number }>): Promise<unknown>;
  clearFaults(id?: number): Promise<number>;
  snapshot(name?: string): Promise<number>;
  restart(mode?: 'keep' | 'empty' | { from: string }): Promise<string>;
  log(): string;
  stop(): Promise<void>;
}

/** Start resplock on a free loopback port (binary: options.bin, $RESPLOCK_BIN, or `resplock` on PATH). */
export function startServer(options?: { bin?: string; args?: string[]; timeoutMs?: number }): Promise<ResplockServer>;
