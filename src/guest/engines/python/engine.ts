// Worker side: the Python engine, CPython compiled to WebAssembly by Pyodide. One interpreter per
// worker, booted from a memory snapshot when the engine host hands one in (hundreds of ms instead
// of seconds). The workspace is a MEMFS directory at /workspace, also the working directory.

import { readFileSync } from "node:fs";
import { loadPyodide, type PyodideAPI } from "pyodide";
import type {
  RunRequest,
  StateAnswer,
  StateImage,
  WheelBlob,
  WorkerInit,
} from "../../../protocol/messages.js";
import type { NetReply } from "../../../protocol/net.js";
import { GUEST_WORKSPACE as ROOT } from "../../../protocol/paths.js";
import type { Engine, EngineOutcome, RunContext } from "../common/engine.js";
import { type GuestEntry, type GuestFs, WorkspaceMirror } from "../common/mirror.js";
import { type NetCall, netFailure, realmFetch } from "../common/net.js";
import { bootRunner, STATE_SOURCE } from "./sources.js";

type PyFS = PyodideAPI["FS"];

/** The parts of Emscripten's in-memory file system nodes the workspace listing reads. */
interface MemNode {
  mode: number;
  mtime: number | Date;
  usedBytes?: number;
  contents?: unknown;
}
interface NodeFs {
  lookupPath(path: string): { node: MemNode };
  lookupNode(parent: MemNode, name: string): MemNode;
}

function memfsAdapter(FS: PyFS): GuestFs {
  const abs = (path: string) => `${ROOT}/${path}`;
  const isDir = (mode: number) => FS.isDir(mode);
  function removeTree(path: string): void {
    const st = FS.lstat(path);
    if (isDir(st.mode)) {
      for (const name of FS.readdir(path))
        if (name !== "." && name !== "..") removeTree(`${path}/${name}`);
      FS.rmdir(path);
    } else {
      FS.unlink(path);
    }
  }
  return {
    list() {
      // Walks nodes, not paths: a lookup by path costs its depth, which made listing a deep tree
      // cost its depth squared (a 900-deep chain took seconds on every run).
      const out = new Map<string, GuestEntry>();
      const fs = FS as unknown as NodeFs;
      const walk = (dir: MemNode, prefix: string) => {
        const names =
          dir.contents && typeof dir.contents === "object" ? Object.keys(dir.contents) : [];
        for (const name of names) {
          const node = fs.lookupNode(dir, name);
          const rel = prefix ? `${prefix}/${name}` : name;
          const mtimeMs = new Date(node.mtime).getTime();
          if (isDir(node.mode)) {
            out.set(rel, { type: "dir", size: 0, mtimeMs });
            walk(node, rel);
          } else if (FS.isFile(node.mode)) {
            out.set(rel, { type: "file", size: node.usedBytes ?? 0, mtimeMs });
          }
        }
      };
      walk(fs.lookupPath(ROOT).node, "");
      return out;
    },
    read: (path) => FS.readFile(abs(path)) as Uint8Array,
    write(path, data, mtimeMs) {
      const full = abs(path);
      FS.mkdirTree(full.slice(0, full.lastIndexOf("/")));
      FS.writeFile(full, data);
      FS.utime(full, mtimeMs, mtimeMs);
    },
    mkdir: (path) => FS.mkdirTree(abs(path)),
    remove(path) {
      try {
        removeTree(abs(path));
      } catch {
        // Already gone.
      }
    },
  };
}

/**
 * Pyodide compiles its WebAssembly itself; while it boots, `WebAssembly.instantiate` is pointed at
 * the module the engine host compiled once, and put back right after (packages loaded later
 * instantiate their own modules normally).
 */
async function withSharedModule<T>(
  shared: WebAssembly.Module | undefined,
  boot: () => Promise<T>,
): Promise<T> {
  if (!shared) return boot();
  const original = WebAssembly.instantiate;
  const patched = async (source: unknown, imports?: WebAssembly.Imports) => {
    if (source instanceof WebAssembly.Module) return original(source, imports);
    return { instance: await original(shared, imports), module: shared };
  };
  WebAssembly.instantiate = patched as typeof WebAssembly.instantiate;
  try {
    return await boot();
  } finally {
    WebAssembly.instantiate = original;
  }
}

/**
 * Emscripten emulates Python sockets over WebSockets from the `ws` package. Guests get no
 * network: socket creation fails here, before the loader and permission walls are even tried.
 */
function disableSockets(py: PyodideAPI): void {
  const module = (py as unknown as { _module: { SOCKFS?: Record<string, unknown> } })._module;
  const sockfs = module.SOCKFS;
  if (!sockfs) return;
  const refuse = () => {
    throw new (py.FS as unknown as { ErrnoError: new (errno: number) => Error }).ErrnoError(
      63 /* ENOSR: no sockets */,
    );
  };
  sockfs.createSocket = refuse;
  const ops = sockfs.websocket_sock_ops as Record<string, unknown> | undefined;
  if (ops) {
    ops.createPeer = refuse;
    ops.connect = refuse;
    ops.listen = refuse;
  }
}

export async function createEngine(init: WorkerInit): Promise<Engine> {
  let snapshot: Uint8Array | undefined;
  let bootNote: string | undefined;
  if (init.assets.pythonSnapshot) {
    try {
      snapshot = readFileSync(init.assets.pythonSnapshot);
    } catch (error) {
      // Gone since the trusted side verified it: boot without it (slowly) rather than not at all.
      bootNote = `Python snapshot unreadable, booting without it: ${String(error)}`;
    }
  }
  const py = await withSharedModule(init.assets.pythonWasm, () =>
    loadPyodide({
      indexURL: init.assets.pyodideDir,
      env: { HOME: ROOT },
      ...(snapshot ? { _loadSnapshot: snapshot } : {}),
    }),
  );
  snapshot = undefined;
  // Pyodide keeps its boot options; the snapshot bytes are no business of the guest's.
  const config = (py as unknown as { _api?: { config?: Record<string, unknown> } })._api?.config;
  if (config) delete config._loadSnapshot;
  disableSockets(py);
  py.FS.mkdirTree(ROOT);
  py.FS.chdir(ROOT);
  // Emscripten finds its entropy source (node:crypto) on first use; after boot the realm can no
  // longer load modules, so os.urandom, secrets and uuid4 would crash the interpreter. Use it now.
  // The snapshot froze the state of `random` (imported before it was taken): every interpreter
  // would draw the same numbers. Reseeded from the entropy source just found.
  py.runPython(`import os, random; os.chdir("${ROOT}"); os.urandom(1); random.seed()`);
  // The runner, compiled by the snapshot's builder when it was this source (see boot.py).
  bootRunner(py);
  py.runPython(STATE_SOURCE, { filename: "<polybox>" });
  type Proxy = { toJs(): unknown; destroy(): void };
  const captureGlobals = py.globals.get("_polybox_capture_state") as (max: number) => Proxy;
  const restoreGlobals = py.globals.get("_polybox_restore_state") as (data: Uint8Array) => Proxy;
  type Sink = (mime: string, text: string, data: unknown) => void;
  const runCell = py.globals.get("_polybox_run") as (
    code: string,
    env: string,
    sink: Sink,
  ) => Promise<string>;
  // The guest's network: the run's bridge while a run is in progress, nothing between runs.
  let netCall: NetCall | null = null;
  const installNet = py.globals.get("_install_net") as (
    call: (
      method: string,
      url: string,
      headers: string,
      body: Uint8Array | undefined,
      redirect: string,
    ) => { meta: string; body?: Uint8Array },
    fetch: typeof globalThis.fetch,
  ) => void;
  installNet(
    (method, url, headers, body, redirect) => {
      const reply: NetReply = netCall
        ? netCall({
            method: String(method),
            url: String(url),
            headers: JSON.parse(String(headers)) as [string, string][],
            ...(body instanceof Uint8Array ? { body: body.slice() } : {}),
            redirect: redirect === "manual" ? "manual" : "follow",
          })
        : { ok: false, kind: "failed", message: "no run is in progress" };
      if (!reply.ok) return { meta: JSON.stringify({ ok: false, message: netFailure(reply) }) };
      const { body: data, ...meta } = reply;
      return { meta: JSON.stringify(meta), body: data };
    },
    realmFetch(() => netCall),
  );
  const interruptBuffer = new Int32Array(new SharedArrayBuffer(4));
  py.setInterruptBuffer(interruptBuffer);
  const mirror = new WorkspaceMirror(memfsAdapter(py.FS));
  const installWheel = py.globals.get("_polybox_install_wheel") as (
    name: string,
    data: Uint8Array,
    dir: string,
  ) => { toJs(): string[]; destroy(): void };
  const module = (
    py as unknown as { _module: { loadDynamicLibrary?: (path: string, flags: object) => void } }
  )._module;

  /** Unpacks wheels into site-packages (or the shared-library dir) and preloads their libraries. */
  const install = (wheels: WheelBlob[], output: Pick<RunContext["output"], "write">) => {
    for (const wheel of wheels) {
      const proxy = installWheel(wheel.fileName, wheel.data, wheel.installDir);
      const libraries = proxy.toJs();
      proxy.destroy();
      if (wheel.installDir !== "dynlib") continue;
      for (const library of libraries) {
        try {
          module.loadDynamicLibrary?.(library, { global: true, nodelete: true });
        } catch (error) {
          output.write(
            "stderr",
            `polybox: could not load ${library} from ${wheel.fileName}: ${String(error)}\n`,
          );
        }
      }
    }
  };

  let sink: RunContext["output"] | null = null;
  /**
   * Once polybox has asked the run to stop (its output cap, a cancel), what Python prints next
   * is dropped, as the run's message says: the KeyboardInterrupt that stop raises would otherwise
   * end the answer with a traceback of an interrupt the user never caused.
   */
  let stopRequested = () => false;
  const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  for (const stream of ["stdout", "stderr"] as const) {
    const write = (buffer: Uint8Array) => {
      if (!stopRequested()) sink?.write(stream, decoders[stream].decode(buffer, { stream: true }));
      return buffer.length;
    };
    if (stream === "stdout") py.setStdout({ write, isatty: false });
    else py.setStderr({ write, isatty: false });
  }

  return {
    ...(bootNote ? { bootNote } : {}),
    applyFiles: (request: RunRequest) => mirror.apply(request.sync, request.fullSync),
    collectFiles: () => mirror.collect(),
    interrupt() {
      interruptBuffer[0] = 2; // SIGINT: raises KeyboardInterrupt at the next bytecode check.
    },
    async captureState(maxBytes: number): Promise<StateAnswer> {
      const proxy = captureGlobals(maxBytes);
      try {
        const [blob, notKept] = proxy.toJs() as [Uint8Array, string[]];
        if (blob.byteLength > maxBytes)
          return { captured: false, reason: `the globals take over ${maxBytes} bytes` };
        return { captured: true, kind: "globals", data: blob.slice(), notKept: [...notKept] };
      } finally {
        proxy.destroy();
      }
    },
    async restoreState(state: StateImage, wheels: WheelBlob[]): Promise<string[]> {
      if (state.kind !== "globals") throw new Error(`a ${state.kind} state is not Python globals`);
      const notKept: string[] = [];
      // The packages first: the state's modules and values may come from them.
      install(wheels, { write: (_stream, text) => notKept.push(text.trim()) });
      const proxy = restoreGlobals(state.data);
      try {
        notKept.push(...(proxy.toJs() as string[]));
      } finally {
        proxy.destroy();
      }
      return notKept;
    },
    async run(request: RunRequest, ctx: RunContext): Promise<EngineOutcome> {
      sink = ctx.output;
      stopRequested = () => ctx.stopRequested;
      netCall = ctx.net;
      interruptBuffer[0] = 0;
      // Bytes, not lines: Pyodide ends every string a `stdin` callback returns with a newline.
      const stdin = new TextEncoder().encode(request.stdin);
      let offset = 0;
      py.setStdin({
        read: (buffer: Uint8Array) => {
          const n = Math.min(buffer.length, stdin.length - offset);
          buffer.set(stdin.subarray(offset, offset + n));
          offset += n;
          return n;
        },
      });
      try {
        if (request.wheels?.length) install(request.wheels, ctx.output);
        const sink: Sink = (mimeType, text, data) => {
          const proxy = data as { toJs?: () => unknown; destroy?: () => void } | null | undefined;
          let bytes: Uint8Array | string | undefined;
          if (typeof data === "string") bytes = data;
          else if (proxy?.toJs) {
            const converted = proxy.toJs();
            if (converted instanceof Uint8Array) bytes = converted.slice();
            proxy.destroy?.();
          }
          ctx.display({ mimeType, text, ...(bytes !== undefined ? { data: bytes } : {}) });
        };
        const json = await runCell(request.code, JSON.stringify(request.env), sink);
        const [exitCode, value] = JSON.parse(json) as [number, string | null];
        return { exitCode, value };
      } finally {
        for (const stream of ["stdout", "stderr"] as const) {
          const rest = decoders[stream].decode();
          if (rest) ctx.output.write(stream, rest);
        }
        sink = null;
        netCall = null;
      }
    },
  };
}
