// Trusted side: a Runtime is a fleet of engine host processes (one per tenant, and warm ones) and the policy that
// applies to every sandbox using it: default limits, ceilings, permissions. Most programs need
// one; `Sandbox.create()` without a runtime uses a shared default that starts on first use and
// does not keep the program alive when idle.

import {
  defaultPoolSizes,
  type EngineHostConfig,
  type Isolation,
  type NativeInterpreters,
  type OsJailStatus,
  type PoolSizes,
  type RuntimeOptions,
} from "./core/config.js";
import { PolyboxError } from "./core/errors.js";
import {
  DEFAULT_LIMITS,
  DEFAULT_MAX_LIMITS,
  DEFAULT_NET_LIMITS,
  type Limits,
  type NetLimits,
  resolveLimits,
} from "./core/limits.js";
import { type LogFn, silentLog } from "./core/log.js";
import { NetSecrets } from "./core/net-secrets.js";
import { PackageResolver } from "./core/packages/packages.js";
import { packageRequirements } from "./core/packages/python-deps.js";
import { WasmerPackageResolver } from "./core/packages/wasmer-packages.js";
import {
  type EngineKind,
  type GuestNet,
  provideDefaultRuntime,
  type RunHost,
  type SandboxRuntime,
} from "./core/sandbox/run-host.js";
import { DataDir, defaultDataDir } from "./core/sandbox/state.js";
import { sweepStaleTempDirs } from "./core/tmp.js";
import type { Permissions } from "./core/types.js";
import { PYODIDE_DIR } from "./supervisor/assets.js";
import { HostFleet } from "./supervisor/fleet.js";
import { launcherReport, linuxJailWrapper } from "./supervisor/jail/launcher.js";
import { sandboxExecAvailable, sandboxExecWrapper } from "./supervisor/jail/macos.js";
import { checkInterpreters, NativeHost } from "./supervisor/native-host.js";
import { NetBroker } from "./supervisor/net/broker.js";
import { InterceptAuthority } from "./supervisor/net/intercept.js";
import { NetPolicy, parseGrant, parseGrants } from "./supervisor/net/policy.js";
import { interpreterTags } from "./supervisor/python-tags.js";
import { ensureQuickjsImage } from "./supervisor/quickjs-image.js";
import { bootCacheGrants, defaultCacheDir, ensurePythonSnapshot } from "./supervisor/snapshot.js";

export class Runtime implements SandboxRuntime {
  readonly limits: Readonly<Limits>;
  readonly maxLimits: Readonly<Limits>;
  readonly permissions: Readonly<Required<Permissions>>;
  readonly pool: Readonly<PoolSizes>;
  /** @internal The engine host processes, one per tenant, and the warm ones. */
  readonly fleet: HostFleet;
  /** @internal */
  readonly log: LogFn;
  /** @internal */
  readonly packages: PackageResolver;
  /** @internal */
  readonly wasmerPackages: WasmerPackageResolver;
  /** @internal */
  readonly state: DataDir;
  /** Which engines this runtime offers (see `Isolation`). */
  readonly isolation: Isolation;
  /** L3 for the WASM engine host on Linux: whether it is on, and what it is or why not. */
  readonly osJail: OsJailStatus | undefined;
  private readonly nativeOptions: { interpreters: NativeInterpreters; spares: number };
  private nativeHost: NativeHost | null = null;
  /** Per-run network limits. */
  readonly netLimits: Readonly<NetLimits>;
  private readonly netPolicy: NetPolicy;
  private readonly netBroker: NetBroker;
  /** @internal */
  readonly netSecrets: NetSecrets;
  private readonly closers = new Set<() => Promise<void>>();
  private closed = false;

  private constructor(
    options: RuntimeOptions,
    snapshot: string | null,
    quickjsImage: string | null,
    cacheDir: string,
  ) {
    this.maxLimits = resolveLimits(DEFAULT_MAX_LIMITS, options.maxLimits, {
      ...DEFAULT_MAX_LIMITS,
      ...options.maxLimits,
    });
    this.limits = resolveLimits(DEFAULT_LIMITS, options.limits, this.maxLimits);
    this.permissions = {
      net: [...(options.permissions?.net ?? [])],
      denyNet: [...(options.permissions?.denyNet ?? [])],
      read: [...(options.permissions?.read ?? [])],
      env: [...(options.permissions?.env ?? [])],
    };
    this.pool = { ...defaultPoolSizes(), ...options.pool };
    this.netPolicy = new NetPolicy(
      parseGrants(this.permissions.net),
      parseGrants(this.permissions.denyNet),
    );
    this.netLimits = { ...DEFAULT_NET_LIMITS, ...options.net?.limits };
    for (const [name, value] of Object.entries(this.netLimits))
      if (!(Number.isFinite(value) && value >= 0))
        throw new PolyboxError(
          "INVALID_ARGUMENT",
          `net.limits.${name} must be a number of at least 0`,
        );
    for (const h of options.net?.headers ?? []) {
      parseGrant(h.host);
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(h.name) || /[\r\n\0]/.test(h.value))
        throw new PolyboxError(
          "INVALID_ARGUMENT",
          `net.headers: "${h.name}" is not a valid header`,
        );
    }
    // A secret for a host the grant leaves out could never be sent: a mistake, said now.
    this.netSecrets = NetSecrets.create(options.net?.secrets ?? [], "net.secrets", (host) =>
      this.netPolicy.narrow([host]),
    );
    this.netBroker = new NetBroker({
      authority: () => this.interceptAuthority(),
      limits: this.netLimits,
      headers: [...(options.net?.headers ?? [])],
      ...(options.net?.ca !== undefined ? { ca: options.net.ca } : {}),
    });
    this.state = new DataDir({
      root: options.dataDir ?? defaultDataDir(),
      ...(options.dataDirQuotaBytes !== undefined ? { quotaBytes: options.dataDirQuotaBytes } : {}),
      ...(options.maxSnapshotsPerSandbox !== undefined
        ? { maxSnapshotsPerSandbox: options.maxSnapshotsPerSandbox }
        : {}),
      ...(options.maxSnapshotBytesPerSandbox !== undefined
        ? { maxSnapshotBytesPerSandbox: options.maxSnapshotBytesPerSandbox }
        : {}),
    });
    this.packages = new PackageResolver({
      sources: [...(options.pythonPackages ?? [])],
      cacheDir,
      pyodideDir: PYODIDE_DIR,
      pyodideCdn: options.pyodideCdn,
      cachedOnly: options.cachedOnly,
      allowPrivateIndex: options.allowPrivateIndex,
      nativeTags: () => interpreterTags(this.native.pythonPath),
    });
    this.wasmerPackages = new WasmerPackageResolver({
      registry: options.wasmerRegistry,
      downloadHosts: options.wasmerDownloadHosts,
      cacheDir,
      cachedOnly: options.cachedOnly,
      allowPrivateIndex: options.allowPrivateIndex,
    });
    const launcher = launcherReport();
    const jailHost = process.platform === "linux" && options.osJail !== false && launcher.available;
    this.isolation = options.isolation ?? (launcher.available ? "auto" : "wasm");
    if (this.isolation !== "wasm" && !launcher.available) {
      throw new PolyboxError(
        "ISOLATION_UNAVAILABLE",
        `isolation "${this.isolation}" needs the native launcher: ${launcher.detail}`,
      );
    }
    this.osJail = jailHost
      ? { active: true, detail: launcher.detail }
      : process.platform === "linux"
        ? {
            active: false,
            detail: launcher.available ? "turned off (osJail: false)" : launcher.detail,
          }
        : undefined;
    this.nativeOptions = {
      interpreters: options.nativeInterpreters ?? {},
      spares: Math.max(0, Math.floor(options.nativeSpares ?? 1)),
    };
    if (this.isolation !== "wasm") checkInterpreters(this.nativeOptions.interpreters);
    this.log = options.log ?? silentLog;
    this.jailHost = jailHost;
    this.fleet = new HostFleet(
      {
        wrapDepth: jailHost ? 2 : 0,
        memoryMb: this.limits.memoryMb,
        ...this.bootCaches(snapshot, quickjsImage),
        log: this.log,
      },
      this.pool,
      {
        budgetMb: options.poolBudgetMb ?? 1024,
        idleShrinkMs: options.poolIdleShrinkMs ?? 10 * 60_000,
        principalIdleMs: options.principalIdleMs ?? 10 * 60_000,
      },
    );
  }

  private readonly jailHost: boolean;

  /** What engine hosts boot from (the Python snapshot, the QuickJS image) and may read. */
  private bootCaches(
    pythonSnapshot: string | null,
    quickjsImage: string | null,
  ): Pick<EngineHostConfig, "pythonSnapshot" | "quickjsImage" | "wrap"> {
    return {
      pythonSnapshot,
      quickjsImage,
      wrap: this.jailHost
        ? linuxJailWrapper(bootCacheGrants(pythonSnapshot, quickjsImage))
        : sandboxExecAvailable()
          ? sandboxExecWrapper
          : (command, args) => [command, args],
    };
  }

  static async create(options: RuntimeOptions = {}): Promise<Runtime> {
    // What an earlier polybox process left behind when it died (workspaces included) goes now.
    sweepStaleTempDirs();
    const cacheDir = options.cacheDir ?? defaultCacheDir();
    const log = options.log ?? silentLog;
    // Built side by side on a first start (seconds); later starts only verify them.
    const caches = Promise.all([
      options.pythonSnapshot === false ? null : ensurePythonSnapshot(cacheDir, log),
      options.quickjsImage === false ? null : ensureQuickjsImage(cacheDir, log),
    ]);
    if (options.waitForBootCaches === false) {
      // Ready at once: hosts started before the caches are there boot without them (slower),
      // and warm hosts start only once they are, so that they boot from them.
      const runtime = new Runtime(options, null, null, cacheDir);
      runtime.fleet.bootCachesPending(caches);
      void caches.then(
        ([snapshot, image]) => {
          if (runtime.closed) return;
          runtime.fleet.setBootCaches(runtime.bootCaches(snapshot, image));
          runtime.fleet.start();
        },
        (error: unknown) => {
          log("warn", "boot caches could not be built; engines boot without them", String(error));
          if (!runtime.closed) runtime.fleet.start();
        },
      );
      return runtime;
    }
    const [snapshot, quickjsImage] = await caches;
    const runtime = new Runtime(options, snapshot, quickjsImage, cacheDir);
    runtime.fleet.start();
    return runtime;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** @internal Registers something to close with the runtime (its sandboxes). */
  track(close: () => Promise<void>): () => void {
    if (this.closed) throw new PolyboxError("SANDBOX_CLOSED", "the runtime is closed");
    this.closers.add(close);
    return () => this.closers.delete(close);
  }

  /** Closes every sandbox of this runtime and stops its engine host. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Engine processes go first, so that a run in flight ends now instead of holding its
    // sandbox's close (and so the whole shutdown) until its own timeout.
    const engines = Promise.all([this.fleet.close(), this.nativeHost?.close()]);
    await Promise.allSettled([...this.closers].map((c) => c()));
    await engines;
  }

  /**
   * Downloads Python packages (and the lock-file packages they depend on) into the package cache
   * without installing them anywhere, so that later sandboxes, or a runtime with `cachedOnly`, find
   * them there. `engine` "native" caches wheels for the machine's python3 instead of Pyodide's.
   * Returns what each requirement resolved to, dependencies included.
   */
  async cachePackages(
    packages: string | string[],
    options: { engine?: EngineKind } = {},
  ): Promise<{ name: string; version: string; fileName: string }[]> {
    if (this.closed) throw new PolyboxError("SANDBOX_CLOSED", "the runtime is closed");
    const wheels = await this.packages.resolve(
      packageRequirements(packages),
      new Map(),
      options.engine ?? "wasm",
    );
    return wheels.map(({ name, version, fileName }) => ({ name, version, fileName }));
  }

  /** @internal */
  netSession(grant: readonly string[] | null, deadline: number, secrets: NetSecrets): GuestNet {
    const policy = grant === null ? this.netPolicy : this.netPolicy.narrow(grant);
    return this.netBroker.session(policy, deadline, secrets);
  }

  /** @internal */
  checkNetGrant(grant: readonly string[]): void {
    this.netPolicy.narrow(grant);
  }

  /** @internal */
  hostFor(
    engine: EngineKind,
    tenant: string,
    workspaceQuotaBytes: number,
    principal?: string,
  ): RunHost {
    if (engine === "native") return this.native.forSandbox(tenant, workspaceQuotaBytes);
    return principal === undefined ? this.fleet.forTenant() : this.fleet.forPrincipal(principal);
  }

  /** @internal */
  releasePrincipal(principal: string): Promise<void> {
    return this.fleet.releasePrincipal(principal);
  }

  private authority: Promise<InterceptAuthority> | null = null;

  /**
   * The authority that ends native tunnels to hosts the boundary adds headers or secrets to,
   * made at first need (native mode with a grant): WebAssembly guests never need it.
   */
  private interceptAuthority(): Promise<InterceptAuthority> {
    this.authority ??= InterceptAuthority.create();
    return this.authority;
  }

  /** @internal The native engines (one jail per sandbox), started on first use. */
  get native(): NativeHost {
    if (this.isolation === "wasm")
      throw new PolyboxError(
        "ISOLATION_UNAVAILABLE",
        'native engines are off: this runtime was made with isolation "wasm"',
      );
    this.nativeHost ??= new NativeHost(
      this.nativeOptions.interpreters,
      this.log,
      undefined,
      this.permissions.net.length > 0,
      {
        count: this.nativeOptions.spares,
        quotaBytes: this.limits.workspaceQuotaBytes,
        memoryMb: this.limits.memoryMb,
      },
      () => this.interceptAuthority().then((a) => a.certPem),
    );
    return this.nativeHost;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

let shared: Promise<Runtime> | null = null;

/** The runtime used when none is given; created on first use. */
function defaultRuntime(): Promise<Runtime> {
  shared ??= Runtime.create().catch((error: unknown) => {
    shared = null;
    throw error;
  });
  return shared;
}

provideDefaultRuntime(defaultRuntime);

/** Closes the default runtime, if it was started (for programs that want a clean exit). */
export async function shutdown(): Promise<void> {
  const current = shared;
  shared = null;
  if (current) await (await current).close();
}
