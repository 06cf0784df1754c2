// Trusted side: the contracts core runs through. A Sandbox needs a RunHost (whatever runs its
// code) and a SandboxRuntime (the policy and the hosts of a runtime). Core owns these and knows
// no implementation: the two RunHosts live in src/supervisor/ (the tenant's own WASM engine host
// process, fleet.ts, and in native mode the sandbox's own kernel jail, native-host.ts), and the
// Runtime that hands them out is wired in src/runtime.ts. What a RunHost returns has been
// validated (src/protocol/validate.ts) before a Sandbox sees it.

import type {
  EngineLanguage,
  EngineResult,
  RestoreAnswer,
  RunRequest,
  StateAnswer,
  StateImage,
  WheelBlob,
} from "../../protocol/messages.js";
import type { NetRecordEntry, NetReply, TunnelFrame, TunnelReply } from "../../protocol/net.js";
import type { Isolation } from "../config.js";
import { PolyboxError } from "../errors.js";
import type { Limits } from "../limits.js";
import type { NetSecrets } from "../net-secrets.js";
import type { PackageResolver } from "../packages/packages.js";
import type { WasmerPackageResolver } from "../packages/wasmer-packages.js";
import type { Permissions } from "../types.js";
import type { DataDir } from "./state.js";

export type OutputFn = (stream: "stdout" | "stderr", text: string) => void;

/**
 * One run's network: the trusted side's broker session that makes the guest's requests (the
 * request is as the untrusted side sent it, unchecked; the session checks it) and records them.
 */
export interface GuestNet {
  request(raw: unknown): Promise<NetReply>;
  /**
   * A frame of CONNECT tunnel `tun` (native mode's proxy), its shape already checked; `send`
   * carries this tunnel's frames back to the guest (the one given with `open` is the one used).
   * False when the frame was for no open tunnel of this run.
   */
  tunnel(tun: number, frame: TunnelFrame, send: (reply: TunnelReply) => void): boolean;
  /** Ends the requests in flight (the run is over); the record stays readable. */
  close(): void;
  readonly record: readonly NetRecordEntry[];
}

/** One run, as every host passes it on. */
export interface HostRun {
  /** The interpreter that runs it (a sandbox's), or null for a fresh one (a one-shot). */
  session: string | null;
  language: EngineLanguage;
  request: RunRequest;
  output: OutputFn;
  signal?: AbortSignal;
  /** The run's network session; a host that cannot relay requests ignores it. */
  net?: GuestNet;
}

export interface RunHost {
  /** Changes whenever the process behind this host was replaced (interpreter state is gone). */
  readonly generation: number;
  /** Makes sure the process is up; `language` is the one about to run (a warm host for it). */
  start(language?: EngineLanguage): Promise<void>;
  run(run: HostRun): Promise<EngineResult>;
  /** Drops one session's interpreter. */
  dispose(session: string): void;
  /**
   * Captures one session's interpreter state between runs, at most `maxBytes` (the answer has
   * been validated). Absent where no engine of this host can: its state is never captured.
   */
  captureState?(session: string, maxBytes: number): Promise<StateAnswer>;
  /** Makes `session` a new interpreter with `state` restored into it (wheels installed first). */
  restoreState?(
    session: string,
    language: EngineLanguage,
    state: StateImage,
    memoryMb: number,
    wheels?: WheelBlob[],
  ): Promise<RestoreAnswer>;
  /** Ends the process behind this host and everything in it. */
  close?(): Promise<void>;
  /** The process's pid on this machine, where there is one (for diagnostics and tests). */
  readonly pid?: number | null;
}

/** `wasm`: the WebAssembly engines. `native`: the machine's interpreters in a kernel jail. */
export type EngineKind = "wasm" | "native";

/** What sandboxes need of the runtime they belong to. `Runtime` is the implementation. */
export interface SandboxRuntime {
  readonly limits: Readonly<Limits>;
  readonly maxLimits: Readonly<Limits>;
  readonly permissions: Readonly<Required<Permissions>>;
  /** Which engines this runtime offers (see `Isolation`). */
  readonly isolation: Isolation;
  readonly isClosed: boolean;
  /** @internal */
  readonly packages: PackageResolver;
  /** @internal Wasmer registry packages for `wasix` runs. */
  readonly wasmerPackages: WasmerPackageResolver;
  /** @internal The data directory: named sandboxes and snapshots (touched on first use only). */
  readonly state: DataDir;
  /**
   * @internal A network session for one run that must end by `deadline` (epoch ms), under the
   * runtime's grant or, given `grant`, a sandbox's narrower one (checked by `checkNetGrant`).
   */
  netSession(grant: readonly string[] | null, deadline: number, secrets: NetSecrets): GuestNet;
  /** @internal The runtime's secrets (`net.secrets`), which every sandbox's guests can use. */
  readonly netSecrets: NetSecrets;
  /** @internal Throws PERMISSION_DENIED unless every entry lies within the runtime's grant. */
  checkNetGrant(grant: readonly string[]): void;
  /**
   * @internal A process of its own for a new tenant: one sandbox, or, given `principal`, that
   * principal's one-shot runs (one process for all of them, a fresh interpreter for each run).
   */
  hostFor(
    engine: EngineKind,
    tenant: string,
    workspaceQuotaBytes: number,
    principal?: string,
  ): RunHost;
  /** @internal Ends a principal's one-shot process (its client went away for good). */
  releasePrincipal?(principal: string): Promise<void>;
  /** @internal Registers something to close with the runtime (its sandboxes). */
  track(close: () => Promise<void>): () => void;
}

let defaultFactory: (() => Promise<SandboxRuntime>) | null = null;

/** @internal Called once by src/runtime.ts: how to get the runtime used when none is given. */
export function provideDefaultRuntime(factory: () => Promise<SandboxRuntime>): void {
  defaultFactory = factory;
}

/** @internal The runtime used when none is given. */
export function defaultRuntime(): Promise<SandboxRuntime> {
  if (!defaultFactory)
    throw new PolyboxError(
      "NOT_IMPLEMENTED",
      "no default runtime: pass a Runtime, or import polybox rather than its core modules",
    );
  return defaultFactory();
}
