// What the prelude finds in a QuickJS context, for the type checker alone (tsconfig.guest.json):
// the host functions engine.ts installs as `__polybox`, Node's util evaluated just before the
// prelude, the data the engine passes it, and the globals the polyfill bundles bring in. The
// files of this folder are one script body (prelude.ts joins them inside one function), so a
// name one file declares at its top level is in scope in the others, as the checker sees it too.

/** The host functions, as engine.ts's defineHost makes them; data crosses as strings and bytes. */
interface PolyboxHost {
  out(stream: "stdout" | "stderr", text: string): void;
  stdin(): string;
  polyfill(name: string): string;
  net(meta: string, body?: ArrayBufferLike | null): { meta: string; body?: ArrayBuffer };
  display(mime: string, text: string, data?: string | ArrayBufferLike): void;
  random(count: number): ArrayBuffer;
  encode(text: string): ArrayBuffer;
  decode(bytes: ArrayBufferLike): string;
  setTimer(id: number, ms: number): void;
  setImmediate(id: number): void;
  clearTimer(id: number): void;
  promiseState(promise: unknown): [0] | [1, unknown] | [2, unknown];
  fs(op: string, args: string): string;
  readBytes(path: string): ArrayBuffer;
  writeBytes(path: string, data: ArrayBufferLike, append: boolean): void;
}

/** Node's util.format and util.inspect (node-inspect-extracted), as far as the prelude uses them. */
interface NodeUtil {
  format(...args: unknown[]): string;
  inspect: ((value: unknown, options?: object) => string) & { custom: symbol };
  __hooks: {
    proxy: (value: unknown, showProxy: boolean) => unknown;
    preview: (value: unknown, isIterator: boolean) => unknown;
  };
  // biome-ignore lint/suspicious/noExplicitAny: the rest of Node's util, passed on to the guest as it is
  [name: string]: any;
}

/** What the engine hands the prelude as data (prelude.ts): the same facts the other languages get. */
declare const facts: {
  machine: { user: string; uid: number; gid: number; host: string; home: string; path: string };
  intlLocales: string[];
};

declare var __polybox: PolyboxHost | undefined;
/** Set by the "node" polyfill bundle, taken and deleted by the prelude. */
// biome-ignore lint/suspicious/noExplicitAny: the bundle's ports of Node modules, not typed here
declare var __polyboxNode: any;

// The web bundle's URL and URLSearchParams (polyfills.ts), defined on first use: typed loosely,
// as the polyfill's own types are not in this program.
// biome-ignore lint/suspicious/noExplicitAny: the polyfill's class
declare var URL: any;
// biome-ignore lint/suspicious/noExplicitAny: the polyfill's class
declare var URLSearchParams: any;

// The own properties the prelude gives errors as Node does (errno, code, syscall, path), and
// V8's Error.captureStackTrace and stackTraceLimit, which it adds.
interface Error {
  code?: string;
  errno?: number;
  syscall?: string;
  path?: string;
}
interface ErrorConstructor {
  captureStackTrace(target: object): void;
  stackTraceLimit?: number;
}

/** Set on Request and Response by their constructors; Body lends them its methods (web.js). */
interface Body {
  _body: ArrayBuffer | null;
}
