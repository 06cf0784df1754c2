// Trusted side: what a sandbox knows of its interpreters, one per language in its host process:
// what each has seen of the workspace, the packages each gets, the state waiting to be put into
// a new one, and whether the host that holds them restarted. The run path and the snapshots
// share it, and take the rest of the sandbox they need as SandboxParts.

import type { StateImage } from "../../protocol/messages.js";
import type { Limits } from "../limits.js";
import type { NetSecrets } from "../net-secrets.js";
import type { Wheel } from "../packages/packages.js";
import type { Language } from "../types.js";
import type { EngineKind, RunHost, SandboxRuntime } from "./run-host.js";
import type { Workspace } from "./workspace.js";

/** Why a language's interpreter in a sandbox is new while its files are not. */
export type Fresh = "reopened" | "restored" | "forked";

/** A language's interpreter state waiting for that language's next run to be put back. */
export interface PendingState {
  kind: StateImage["kind"];
  /** The bytes, or the object in the data directory that holds them. */
  data?: Uint8Array;
  hash?: string;
  bytes: number;
  notKept: string[];
}

/** Why a language's interpreter is new, and the state to put into it, if there is one. */
export interface FreshEntry {
  why: Fresh;
  state?: PendingState;
  /** Why the snapshot holds no state of this language. */
  reason?: string;
}

/** Per language, a sandbox's interpreters as its trusted side keeps track of them. */
export class Interpreters {
  /** Per language: the workspace generation its interpreter has seen, or null for "send everything". */
  readonly synced = new Map<Language, number | null>();
  /**
   * Languages whose interpreter was replaced during a run its caller cancelled: whoever cancels
   * often stops listening (an MCP client that sent notifications/cancelled never gets the
   * answer), so the next run of that language says the state was lost too.
   */
  readonly lossToRetell = new Set<Language>();
  /** Python packages installed in this sandbox, re-installed whenever its interpreter is fresh. */
  readonly wheels = new Map<string, Wheel>();
  /** Per language: why its next interpreter is new, and the state to restore into it. */
  readonly freshState = new Map<Language, FreshEntry>();
  /** Runs under way, and when one last started or ended. */
  runs = 0;
  lastUsedAt = Date.now();
  private hostGeneration: number;

  constructor(
    private readonly sandboxId: string,
    readonly host: RunHost,
  ) {
    this.hostGeneration = host.generation;
  }

  /** The host's name for `language`'s interpreter of this sandbox. */
  sessionKey(language: Language): string {
    return `${this.sandboxId}:${language}`;
  }

  /** Whether the host restarted since the last look: no interpreter of before is left. */
  get hostRestarted(): boolean {
    return this.host.generation !== this.hostGeneration;
  }

  /**
   * After an engine host restart every interpreter of this sandbox is gone; returns the
   * languages that had state, so their next result can say it was lost.
   */
  noticeHostRestart(): Set<Language> {
    const host = this.host;
    if (host.generation === this.hostGeneration) return new Set();
    const lost = new Set([...this.synced.keys()]);
    this.synced.clear();
    this.hostGeneration = host.generation;
    return lost;
  }
}

/** The parts of a sandbox its run path and its snapshots work on, passed explicitly. */
export interface SandboxParts {
  runtime: SandboxRuntime;
  engine: EngineKind;
  limits: Readonly<Limits>;
  workspace: Workspace;
  /** A named sandbox's directory in the data directory; null for an ephemeral one. */
  home: string | null;
  interpreters: Interpreters;
  /** The sandbox's own network grant (within the runtime's), or null for the runtime's. */
  netGrant: readonly string[] | null;
  /** The secrets its guests can use: the runtime's and its own. */
  netSecrets: NetSecrets;
}
