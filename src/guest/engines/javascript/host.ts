// Worker side: `__polybox`, the host functions the JavaScript engine installs in each QuickJS
// context, the only ones the prelude (and so the guest) can reach. They carry output, stdin,
// timers, network requests, displays, entropy and the workspace's file operations (host-fs.ts)
// across to this side; registered in a fixed order, which boot and state images rely on.

import { randomFillSync } from "node:crypto";
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten";
import type { Display } from "../../../protocol/messages.js";
import type { NetReply, NetRequest } from "../../../protocol/net.js";
import { netFailure } from "../common/net.js";
import { fsOp, writeFile } from "./host-fs.js";
import { FsError, type MemFs } from "./memfs.js";
import { polyfillSource } from "./polyfills.js";

/**
 * A copy of a guest ArrayBuffer's bytes. `getArrayBuffer` copies them out of the WebAssembly heap
 * into memory the returned lifetime owns: not disposing it left every buffer a guest wrote in
 * the heap until its memory limit was reached.
 */
function bytesOf(ctx: QuickJSContext, handle: QuickJSHandle): Uint8Array {
  const lifetime = ctx.getArrayBuffer(handle);
  try {
    return lifetime.value.slice();
  } finally {
    lifetime.dispose();
  }
}

interface HostHooks {
  out(stream: "stdout" | "stderr", text: string): void;
  net(request: NetRequest): NetReply;
  display(item: Display): void;
  stdin(): string;
  setTimer(id: number, ms: number): void;
  setImmediate(id: number): void;
  clearTimer(id: number): void;
}

/** Installs `__polybox`, the only host functions the prelude (and so the guest) can reach. */
export function defineHost(ctx: QuickJSContext, fs: MemFs, hooks: HostHooks): void {
  const host = ctx.newObject();
  const fn = (name: string, impl: (...args: QuickJSHandle[]) => QuickJSHandle | undefined) => {
    const handle = ctx.newFunction(name, impl);
    ctx.setProp(host, name, handle);
    handle.dispose();
  };
  const guestError = (e: unknown) => {
    const err = e instanceof FsError ? e : new FsError("EIO", String(e));
    return ctx.newError({ name: "Error", message: err.message });
  };

  fn("out", (stream, text) => {
    const s = ctx.getString(stream!);
    hooks.out(s === "stderr" ? "stderr" : "stdout", ctx.getString(text!));
    return undefined;
  });
  fn("stdin", () => ctx.newString(hooks.stdin()));
  fn("polyfill", (name) => ctx.newString(polyfillSource(ctx.getString(name!))));
  fn("net", (metaHandle, bodyHandle) => {
    const meta = JSON.parse(ctx.getString(metaHandle!)) as Omit<NetRequest, "body">;
    const body =
      bodyHandle && ctx.typeof(bodyHandle) === "object" ? bytesOf(ctx, bodyHandle) : undefined;
    const reply = hooks.net({
      method: String(meta.method),
      url: String(meta.url),
      headers: Array.isArray(meta.headers) ? meta.headers : [],
      ...(body ? { body } : {}),
      redirect: meta.redirect === "manual" ? "manual" : "follow",
    });
    const out = ctx.newObject();
    const { body: replyBody, ...rest } = reply.ok ? reply : { ...reply, body: undefined };
    const metaOut = ctx.newString(
      JSON.stringify(reply.ok ? rest : { ok: false, message: netFailure(reply) }),
    );
    ctx.setProp(out, "meta", metaOut);
    metaOut.dispose();
    if (replyBody) {
      const buffer = ctx.newArrayBuffer(replyBody.slice().buffer);
      ctx.setProp(out, "body", buffer);
      buffer.dispose();
    }
    return out;
  });
  fn("display", (mime, text, data) => {
    const item: Display = { mimeType: ctx.getString(mime!), text: ctx.getString(text!) };
    if (data && ctx.typeof(data) === "string") item.data = ctx.getString(data);
    else if (data && ctx.typeof(data) === "object") item.data = bytesOf(ctx, data);
    hooks.display(item);
    return undefined;
  });
  // Entropy for crypto.getRandomValues, randomUUID and randomBytes: drawn from this process's
  // CSPRNG at each call, so no interpreter, boot image or captured state holds a seed to replay.
  fn("random", (count) => {
    const n = Math.max(0, Math.min(Math.floor(ctx.getNumber(count!)) || 0, 65536));
    const bytes = new Uint8Array(n);
    randomFillSync(bytes);
    return ctx.newArrayBuffer(bytes.buffer);
  });
  fn("encode", (text) => ctx.newArrayBuffer(encoder.encode(ctx.getString(text!)).buffer));
  fn("decode", (bytes) => ctx.newString(decoder.decode(bytesOf(ctx, bytes!))));
  fn("setTimer", (id, ms) => {
    hooks.setTimer(ctx.getNumber(id!), Math.max(0, Math.min(ctx.getNumber(ms!), 2 ** 31 - 1)));
    return undefined;
  });
  fn("setImmediate", (id) => {
    hooks.setImmediate(ctx.getNumber(id!));
    return undefined;
  });
  // A promise's state and its value or reason, for inspect: [0] pending, [1, value], [2, reason].
  fn("promiseState", (promise) => {
    const out = ctx.newArray();
    const state = ctx.getPromiseState(promise!);
    const set = (i: number, handle: QuickJSHandle) => {
      ctx.setProp(out, i, handle);
      handle.dispose();
    };
    if (state.type === "pending") set(0, ctx.newNumber(0));
    else if (state.type === "rejected") {
      set(0, ctx.newNumber(2));
      set(1, state.error);
    } else if (!state.notAPromise) {
      set(0, ctx.newNumber(1));
      set(1, state.value);
    } else set(0, ctx.newNumber(0));
    return out;
  });
  fn("clearTimer", (id) => {
    hooks.clearTimer(ctx.getNumber(id!));
    return undefined;
  });
  fn("fs", (opHandle, argsHandle) => {
    const op = ctx.getString(opHandle!);
    const args = JSON.parse(ctx.getString(argsHandle!)) as unknown[];
    try {
      return ctx.newString(JSON.stringify({ ok: fsOp(fs, op, args) ?? null }));
    } catch (e) {
      const err = e instanceof FsError ? e : new FsError("EIO", String(e));
      return ctx.newString(JSON.stringify({ error: { code: err.code, message: err.message } }));
    }
  });
  fn("readBytes", (pathHandle) => {
    const path = ctx.getString(pathHandle!);
    try {
      const data = fs.read(fs.resolve(path), path);
      return ctx.newArrayBuffer(data.slice().buffer);
    } catch (e) {
      throw guestError(e);
    }
  });
  fn("writeBytes", (pathHandle, dataHandle, appendHandle) => {
    const path = ctx.getString(pathHandle!);
    const bytes = bytesOf(ctx, dataHandle!);
    try {
      const rel = fs.resolve(path);
      writeFile(fs, rel, bytes, ctx.dump(appendHandle!) === true, path);
    } catch (e) {
      throw guestError(e);
    }
    return undefined;
  });
  ctx.setProp(ctx.global, "__polybox", host);
  host.dispose();
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
