// Trusted side: state that outlives the process, in one data directory. Named sandboxes keep
// their workspaces here; snapshots are manifests (path -> sha256, size, mtime) over a
// content-addressed object store, so that a restore or a fork is a tree of hard links to objects
// rather than a copy. That is safe because a workspace never writes a file in place (see
// workspace.ts): a write renames a new file over the link, and the object stays as it was.
//
//   <root>/objects/ab/cdef…                      file contents by sha256, shared by every snapshot,
//                                                and interpreter states (gzip) by their sha256
//   <root>/tmp/<pid>/                            objects being added (same file system: renamed in)
//   <root>/scopes/<scope>/sandboxes/<name>/      meta.json, lock, workspace/, staging/
//   <root>/scopes/<scope>/snapshots/<id>.json    a snapshot's manifest
//   <root>/live/<pid>.json, <root>/lost.json     ephemeral sandboxes of this and of dead processes
//
// A scope is whose names and snapshots these are (an account of a server, "local" for a program
// using the library); on disk it is a hash, so a token never lands in a path.

import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { PolyboxError } from "../errors.js";
import { formatBytes, type Limits } from "../limits.js";
import { alive } from "../tmp.js";
import type { Language } from "../types.js";
import { exists, treeBytes, writeAtomic } from "./durable.js";
import { ObjectStore } from "./objects.js";
import { DIR_COST_BYTES, type WorkspaceEntry } from "./workspace.js";

export const DEFAULT_DATA_QUOTA_BYTES = 10 * 1024 ** 3;
export const DEFAULT_MAX_SNAPSHOTS = 32;
export const DEFAULT_MAX_SNAPSHOT_BYTES = 4 * 1024 ** 3;
/** The scope of a program that names none. */
export const LOCAL_SCOPE = "local";

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const SNAPSHOT_ID = /^snap-[0-9a-f]{32}$/;
/** How many ids of ephemeral sandboxes of dead processes are remembered, to say "lost". */
const REMEMBERED_LOST = 1000;
/**
 * What a named sandbox holds besides its files, as counted against the quota (with its
 * meta.json's bytes): its directory, and the workspace/ and staging/ directories in it.
 */
export const NAMED_SANDBOX_COST_BYTES = 3 * DIR_COST_BYTES;

/**
 * The per-user state directory: `$XDG_STATE_HOME/polybox` (else `~/.local/state/polybox`) on
 * Linux and other Unixes, `~/Library/Application Support/polybox` on macOS,
 * `%LOCALAPPDATA%\polybox` on Windows.
 */
export function defaultDataDir(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = os.homedir(),
): string {
  if (platform === "win32")
    return path.win32.join(
      env.LOCALAPPDATA ?? path.win32.join(home, "AppData", "Local"),
      "polybox",
    );
  if (platform === "darwin") return path.join(home, "Library", "Application Support", "polybox");
  const state = env.XDG_STATE_HOME;
  // The XDG spec: a relative value is invalid and to be ignored.
  return path.join(
    state && path.isAbsolute(state) ? state : path.join(home, ".local", "state"),
    "polybox",
  );
}

/** Checks a named sandbox's name: it becomes a directory name, so a short safe alphabet. */
export function checkName(name: unknown): string {
  if (typeof name === "string" && NAME.test(name) && name !== "." && name !== "..") return name;
  throw new PolyboxError(
    "INVALID_ARGUMENT",
    `a sandbox name is 1 to 64 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit; got ${JSON.stringify(name)}`,
  );
}

export interface DataDirOptions {
  root: string;
  /** Bytes the whole directory may hold (objects and named workspaces). */
  quotaBytes?: number;
  /** Snapshots one sandbox may have. */
  maxSnapshotsPerSandbox?: number;
  /** Bytes (as the workspaces held them, before sharing) one sandbox's snapshots may add up to. */
  maxSnapshotBytesPerSandbox?: number;
}

/** What a named sandbox keeps beside its workspace. */
export interface SandboxMeta {
  version: 1;
  id: string;
  name: string;
  /** The sandbox's EngineKind (run-host.ts, which imports this module). */
  engine: "wasm" | "native";
  limits: Limits;
  createdAt: number;
  /** The scope's hash, as in the directory's path. */
  scope: string;
}

export interface SnapshotInfo {
  id: string;
  label: string | null;
  createdAt: number;
  /** The sandbox it was taken of, and its name if it has one. */
  sandboxId: string;
  sandboxName: string | null;
  files: number;
  /** The files' bytes as the workspace held them. */
  bytes: number;
  /** Per language whose interpreter the sandbox had: what of its state the snapshot holds. */
  state: Partial<Record<Language, SnapshotStateInfo>>;
}

/**
 * What a snapshot holds of one language's interpreter, so what a restore or a fork brings back:
 * `memory`, the whole interpreter as it was (JavaScript, TypeScript: QuickJS's memory); `globals`,
 * the global names whose values could be serialized, and the modules they named (Python); `none`,
 * nothing (a fresh interpreter), with the reason.
 */
export interface SnapshotStateInfo {
  kept: "memory" | "globals" | "none";
  /** The state's bytes as captured (counted against `maxSnapshotBytesPerSandbox`). */
  bytes: number;
  /** What the interpreter had that the state does not hold (a Python global and why). */
  notKept?: string[];
  /** Why nothing was kept (`none`). */
  reason?: string;
}

/** A state as a manifest records it: its info, and the object holding its bytes. */
export interface StateRecord extends SnapshotStateInfo {
  hash?: string;
}

interface Manifest extends Omit<SnapshotInfo, "state"> {
  version: 1;
  /** Set for a snapshot of an ephemeral sandbox: it goes with that sandbox, or with this process. */
  pid?: number;
  entries: WorkspaceEntry[];
  /** Absent in a snapshot taken before interpreter state was captured: files only. */
  states?: Partial<Record<Language, StateRecord>>;
}

export class DataDir {
  readonly root: string;
  readonly quotaBytes: number;
  readonly maxSnapshotsPerSandbox: number;
  readonly maxSnapshotBytesPerSandbox: number;
  private ready: Promise<void> | null = null;
  /** Bytes of each named workspace (by directory), loaded or not. */
  private readonly workspaceBytes = new Map<string, number>();
  /** Bytes of each named sandbox's own entries (by directory): see NAMED_SANDBOX_COST_BYTES. */
  private readonly namedBytes = new Map<string, number>();
  /** Named sandboxes this process has open. */
  private readonly held = new Set<string>();
  /** Ids of ephemeral sandboxes of dead processes, with their scope's hash. */
  private readonly lostIds = new Map<string, string>();
  private queue: Promise<unknown> = Promise.resolve();

  /** Snapshots' files and interpreter states, by sha256. */
  readonly objects: ObjectStore;

  constructor(options: DataDirOptions) {
    this.root = path.resolve(options.root);
    this.objects = new ObjectStore(this.p("objects"), this.p("tmp", String(process.pid)), (bytes) =>
      this.check(bytes),
    );
    this.quotaBytes = positive("dataDirQuotaBytes", options.quotaBytes ?? DEFAULT_DATA_QUOTA_BYTES);
    this.maxSnapshotsPerSandbox = positive(
      "maxSnapshotsPerSandbox",
      options.maxSnapshotsPerSandbox ?? DEFAULT_MAX_SNAPSHOTS,
    );
    this.maxSnapshotBytesPerSandbox = positive(
      "maxSnapshotBytesPerSandbox",
      options.maxSnapshotBytesPerSandbox ?? DEFAULT_MAX_SNAPSHOT_BYTES,
    );
  }

  /** Bytes the directory holds now, as counted against `dataDirQuotaBytes`. */
  get usedBytes(): number {
    let n = this.objects.bytes;
    for (const b of this.workspaceBytes.values()) n += b;
    for (const b of this.namedBytes.values()) n += b;
    return n;
  }

  /**
   * Makes the directory and takes stock, once: what the objects and named workspaces hold, which
   * ephemeral sandboxes died with their process (their snapshots go). Nothing touches the disk
   * before a caller needs state.
   */
  init(): Promise<void> {
    this.ready ??= this.takeStock().catch((error: unknown) => {
      this.ready = null;
      throw error;
    });
    return this.ready;
  }

  private async takeStock(): Promise<void> {
    await fs.mkdir(this.root, { recursive: true, mode: 0o700 });
    for (const sub of ["objects", "scopes", "live"])
      await fs.mkdir(this.p(sub), { recursive: true });
    // Each process stages in a directory of its own; a dead one's leftovers go.
    for (const name of await names(this.p("tmp"))) {
      const pid = Number(name);
      if (pid === process.pid || !pid || !alive(pid))
        await fs.rm(this.p("tmp", name), { recursive: true, force: true });
    }
    await fs.mkdir(this.p("tmp", String(process.pid)), { recursive: true });
    this.objects.bytes = await treeBytes(this.p("objects"), 0);
    for (const scope of await names(this.p("scopes"))) {
      for (const name of await names(this.p("scopes", scope, "sandboxes"))) {
        const dir = this.p("scopes", scope, "sandboxes", name);
        this.workspaceBytes.set(dir, await treeBytes(path.join(dir, "workspace"), DIR_COST_BYTES));
        const meta = await fs.lstat(path.join(dir, "meta.json")).catch(() => null);
        if (meta) this.namedBytes.set(dir, NAMED_SANDBOX_COST_BYTES + meta.size);
      }
    }
    await this.collectDead();
  }

  /** Refuses growth past `dataDirQuotaBytes`. */
  check(bytes: number): void {
    if (bytes <= 0 || this.usedBytes + bytes <= this.quotaBytes) return;
    throw new PolyboxError(
      "QUOTA_EXCEEDED",
      `the data directory would pass its quota: dataDirQuotaBytes=${this.quotaBytes} (${formatBytes(this.quotaBytes)}), ${formatBytes(this.usedBytes)} in use, ${formatBytes(bytes)} more asked for`,
      { details: { limit: "dataDirQuotaBytes", value: this.quotaBytes } },
    );
  }

  /** What a named workspace charges its growth to (see Workspace's `charge`). */
  chargeFor(dir: string): (bytes: number) => void {
    return (bytes) => {
      if (bytes > 0) this.check(bytes);
      this.workspaceBytes.set(dir, Math.max(0, (this.workspaceBytes.get(dir) ?? 0) + bytes));
    };
  }

  scopeDir(scope: string): string {
    return this.p("scopes", scopeKey(scope));
  }

  sandboxDir(scope: string, name: string): string {
    return path.join(this.scopeDir(scope), "sandboxes", checkName(name));
  }

  async readMeta(dir: string): Promise<SandboxMeta | null> {
    const text = await fs.readFile(path.join(dir, "meta.json"), "utf8").catch(() => null);
    if (text === null) return null;
    return JSON.parse(text) as SandboxMeta;
  }

  /**
   * Makes a named sandbox's directory and its metadata, atomically. Its entries count against
   * `dataDirQuotaBytes` (NAMED_SANDBOX_COST_BYTES and the metadata's bytes).
   */
  async createNamed(dir: string, meta: SandboxMeta): Promise<void> {
    const text = `${JSON.stringify(meta, null, 2)}\n`;
    const cost = NAMED_SANDBOX_COST_BYTES + Buffer.byteLength(text);
    this.check(cost);
    await fs.mkdir(path.join(dir, "workspace"), { recursive: true });
    await writeAtomic(path.join(dir, "meta.json"), text);
    this.namedBytes.set(dir, cost);
    this.workspaceBytes.set(dir, this.workspaceBytes.get(dir) ?? 0);
  }

  /** The named sandboxes of a scope, from their metadata. */
  async listNamed(scope: string): Promise<SandboxMeta[]> {
    const base = path.join(this.scopeDir(scope), "sandboxes");
    const out: SandboxMeta[] = [];
    for (const name of await names(base)) {
      const meta = await this.readMeta(path.join(base, name)).catch(() => null);
      if (meta) out.push(meta);
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** How many named sandboxes a scope has, open or not: the directories with metadata. */
  async countNamed(scope: string): Promise<number> {
    const base = path.join(this.scopeDir(scope), "sandboxes");
    let n = 0;
    for (const name of await names(base)) if (await exists(path.join(base, name, "meta.json"))) n++;
    return n;
  }

  /**
   * Removes what an open that failed before writing the metadata left of a named sandbox (its
   * directory, perhaps an empty workspace): nothing lists it, nothing can delete it. A
   * directory with metadata, or with a lock (another process making it), stays.
   */
  async dropUnmade(dir: string): Promise<void> {
    if (this.held.has(dir)) return;
    if ((await exists(path.join(dir, "meta.json"))) || (await exists(path.join(dir, "lock"))))
      return;
    await fs.rm(dir, { recursive: true, force: true });
    this.workspaceBytes.delete(dir);
  }

  bytesOf(dir: string): number {
    return this.workspaceBytes.get(dir) ?? 0;
  }

  /**
   * Takes a named sandbox for this process: one process, one Sandbox at a time, so two never
   * write the same tree. The lock file holds the pid; a dead holder's lock is taken over.
   */
  async lock(dir: string, name: string): Promise<void> {
    const busy = () =>
      new PolyboxError("SANDBOX_BUSY", `the sandbox named "${name}" is open already`, {
        details: { name },
      });
    if (this.held.has(dir)) throw busy();
    const file = path.join(dir, "lock");
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await fs.writeFile(file, String(process.pid), { flag: "wx", mode: 0o600 });
        this.held.add(dir);
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const pid = Number(await fs.readFile(file, "utf8").catch(() => "0"));
      if (pid && pid !== process.pid && alive(pid)) throw busy();
      await fs.rm(file, { force: true });
    }
    throw busy();
  }

  async unlock(dir: string): Promise<void> {
    if (!this.held.delete(dir)) return;
    await fs.rm(path.join(dir, "lock"), { force: true });
  }

  /** Deletes a named sandbox (closed) and its snapshots. */
  async deleteNamed(scope: string, dir: string, sandboxId: string): Promise<void> {
    await fs.rm(dir, { recursive: true, force: true });
    this.workspaceBytes.delete(dir);
    this.namedBytes.delete(dir);
    await this.dropSnapshotsOf(scope, sandboxId);
  }

  /**
   * Checks a new snapshot against its sandbox's limits (count and bytes) before any file is
   * stored. `bytes`: the workspace's files as it holds them.
   */
  async checkSnapshotLimits(scope: string, sandboxId: string, bytes: number): Promise<void> {
    const mine = (await this.listSnapshots(scope)).filter((s) => s.sandboxId === sandboxId);
    if (mine.length >= this.maxSnapshotsPerSandbox) {
      throw new PolyboxError(
        "QUOTA_EXCEEDED",
        `this sandbox has ${mine.length} snapshots, the most one may have (maxSnapshotsPerSandbox=${this.maxSnapshotsPerSandbox}); delete one first`,
        {
          details: {
            limit: "maxSnapshotsPerSandbox",
            value: this.maxSnapshotsPerSandbox,
            sandboxId,
          },
        },
      );
    }
    const total = mine.reduce((n, s) => n + s.bytes + stateBytes(s.state), 0) + bytes;
    if (total > this.maxSnapshotBytesPerSandbox) {
      throw new PolyboxError(
        "QUOTA_EXCEEDED",
        `this sandbox's snapshots would hold ${formatBytes(total)}, over maxSnapshotBytesPerSandbox=${this.maxSnapshotBytesPerSandbox} (${formatBytes(this.maxSnapshotBytesPerSandbox)}); delete one first`,
        {
          details: {
            limit: "maxSnapshotBytesPerSandbox",
            value: this.maxSnapshotBytesPerSandbox,
            sandboxId,
          },
        },
      );
    }
  }

  /** Writes a snapshot's manifest; its objects are stored already. */
  async saveSnapshot(
    scope: string,
    info: Omit<SnapshotInfo, "id" | "createdAt" | "files" | "bytes" | "state">,
    entries: WorkspaceEntry[],
    ephemeral: boolean,
    states: Partial<Record<Language, StateRecord>> = {},
  ): Promise<SnapshotInfo> {
    const files = entries.filter((e) => e.type === "file");
    const manifest: Manifest = {
      version: 1,
      id: `snap-${randomUUID().replaceAll("-", "")}`,
      createdAt: Date.now(),
      ...info,
      files: files.length,
      bytes: files.reduce((n, e) => n + e.size, 0),
      ...(ephemeral ? { pid: process.pid } : {}),
      entries,
      states,
    };
    const dir = path.join(this.scopeDir(scope), "snapshots");
    await fs.mkdir(dir, { recursive: true });
    await writeAtomic(path.join(dir, `${manifest.id}.json`), JSON.stringify(manifest));
    return infoOf(manifest);
  }

  /** A snapshot of the scope, or SNAPSHOT_NOT_FOUND (another scope's ids are unknown here). */
  async snapshot(
    scope: string,
    id: string,
  ): Promise<{
    info: SnapshotInfo;
    entries: WorkspaceEntry[];
    states: Partial<Record<Language, StateRecord>>;
  }> {
    const manifest =
      typeof id === "string" && SNAPSHOT_ID.test(id) ? await this.readManifest(scope, id) : null;
    if (!manifest) {
      throw new PolyboxError("SNAPSHOT_NOT_FOUND", `no snapshot with id ${JSON.stringify(id)}`, {
        details: { snapshotId: String(id) },
      });
    }
    return { info: infoOf(manifest), entries: manifest.entries, states: manifest.states ?? {} };
  }

  async listSnapshots(scope: string, sandboxId?: string): Promise<SnapshotInfo[]> {
    const out: SnapshotInfo[] = [];
    for (const m of await this.manifests(path.join(this.scopeDir(scope), "snapshots")))
      if (sandboxId === undefined || m.sandboxId === sandboxId) out.push(infoOf(m));
    return out.sort((a, b) => a.createdAt - b.createdAt);
  }

  async deleteSnapshot(scope: string, id: string): Promise<void> {
    await this.snapshot(scope, id);
    await fs.rm(path.join(this.scopeDir(scope), "snapshots", `${id}.json`), { force: true });
    await this.collectGarbage();
  }

  /** Deletes every snapshot of a sandbox (it was deleted, or was ephemeral and closed). */
  async dropSnapshotsOf(scope: string, sandboxId: string): Promise<void> {
    const mine = await this.listSnapshots(scope, sandboxId);
    for (const s of mine)
      await fs.rm(path.join(this.scopeDir(scope), "snapshots", `${s.id}.json`), { force: true });
    if (mine.length > 0) await this.collectGarbage();
  }

  /** Runs `fn` after every earlier store operation: snapshots and garbage collection take turns. */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Removes objects no manifest names. A workspace's hard link to one keeps its content on disk
   * (it is that workspace's file now, counted there).
   */
  collectGarbage(): Promise<void> {
    return this.serial(async () => {
      const wanted = new Set<string>();
      for (const scope of await names(this.p("scopes")))
        for (const m of await this.manifests(this.p("scopes", scope, "snapshots"))) {
          for (const e of m.entries) if (e.hash) wanted.add(e.hash);
          for (const st of Object.values(m.states ?? {})) if (st?.hash) wanted.add(st.hash);
        }
      await this.objects.sweep(wanted);
    });
  }

  /** Records the ephemeral sandboxes this process has open, so that a successor can say "lost". */
  async recordLive(sandboxes: readonly { id: string; scope: string }[]): Promise<void> {
    await this.init();
    const list = sandboxes.map((s) => ({ id: s.id, scope: scopeKey(s.scope) }));
    await writeAtomic(
      this.p("live", `${process.pid}.json`),
      JSON.stringify({ pid: process.pid, sandboxes: list }),
    );
  }

  /** Whether `id` was an ephemeral sandbox of this scope in a process that is gone. */
  wasLost(id: string, scope: string): boolean {
    return this.lostIds.get(id) === scopeKey(scope);
  }

  /** Forgets this process's record (a clean shutdown: its sandboxes were closed, not lost). */
  async forgetLive(): Promise<void> {
    if (this.ready) await fs.rm(this.p("live", `${process.pid}.json`), { force: true });
  }

  /** Dead processes' ephemeral sandboxes become "lost", and their snapshots go. */
  private async collectDead(): Promise<void> {
    const lost = JSON.parse(await fs.readFile(this.p("lost.json"), "utf8").catch(() => "[]")) as [
      string,
      string,
    ][];
    for (const name of await names(this.p("live"))) {
      const pid = Number(name.replace(/\.json$/, ""));
      if (!pid || pid === process.pid || alive(pid)) continue;
      const file = this.p("live", name);
      const record = JSON.parse(await fs.readFile(file, "utf8").catch(() => "{}")) as {
        sandboxes?: { id: string; scope: string }[];
      };
      for (const s of record.sandboxes ?? []) lost.push([s.id, s.scope]);
      await fs.rm(file, { force: true });
    }
    for (const [id, scope] of lost.slice(-REMEMBERED_LOST)) this.lostIds.set(id, scope);
    await writeAtomic(this.p("lost.json"), JSON.stringify([...this.lostIds]));
    let dropped = 0;
    for (const scope of await names(this.p("scopes"))) {
      const dir = this.p("scopes", scope, "snapshots");
      for (const m of await this.manifests(dir)) {
        if (m.pid === undefined || m.pid === process.pid || alive(m.pid)) continue;
        await fs.rm(path.join(dir, `${m.id}.json`), { force: true });
        dropped++;
      }
    }
    if (dropped > 0) await this.collectGarbage();
  }

  private async readManifest(scope: string, id: string): Promise<Manifest | null> {
    const text = await fs
      .readFile(path.join(this.scopeDir(scope), "snapshots", `${id}.json`), "utf8")
      .catch(() => null);
    return text === null ? null : (JSON.parse(text) as Manifest);
  }

  private async manifests(dir: string): Promise<Manifest[]> {
    const out: Manifest[] = [];
    for (const name of await names(dir)) {
      if (!name.endsWith(".json")) continue;
      const text = await fs.readFile(path.join(dir, name), "utf8").catch(() => null);
      if (text !== null) out.push(JSON.parse(text) as Manifest);
    }
    return out;
  }

  private p(...parts: string[]): string {
    return path.join(this.root, ...parts);
  }
}

function infoOf(m: Manifest): SnapshotInfo {
  return {
    id: m.id,
    label: m.label,
    createdAt: m.createdAt,
    sandboxId: m.sandboxId,
    sandboxName: m.sandboxName,
    files: m.files,
    bytes: m.bytes,
    state: Object.fromEntries(
      Object.entries(m.states ?? {}).map(([language, { hash: _hash, ...info }]) => [
        language,
        info,
      ]),
    ),
  };
}

/** The bytes of a snapshot's interpreter states, as captured. */
function stateBytes(state: SnapshotInfo["state"] | undefined): number {
  let n = 0;
  for (const s of Object.values(state ?? {})) n += s?.bytes ?? 0;
  return n;
}

/** A scope as a directory name: a hash, so that what names a client (a token) is not on disk. */
function scopeKey(scope: string): string {
  return createHash("sha256").update(`polybox-scope\0${scope}`).digest("hex").slice(0, 32);
}

function positive(option: string, n: number): number {
  if (!Number.isFinite(n) || n <= 0)
    throw new PolyboxError("INVALID_ARGUMENT", `${option} must be a positive number, got ${n}`);
  return n;
}

async function names(dir: string): Promise<string[]> {
  return fs.readdir(dir).catch(() => []);
}
