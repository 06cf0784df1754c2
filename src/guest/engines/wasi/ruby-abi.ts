// Worker side: the few calls into ruby.wasm's reactor interface that the Ruby engine needs, with
// the canonical-ABI lowering they take (strings and lists passed through `cabi_realloc`, Ruby
// objects as handles). ruby.wasm's own JavaScript glue (@ruby/wasm-wasi) does the same for its
// whole API and wires Ruby's `JS` module to the realm; this file deliberately does neither, so
// the engine host needs none of that package, and guest Ruby gets no handle on JavaScript.
//
// A Ruby object crosses as a "value": an index the module chose when it made the handle
// (`resource_new`). Values the module returns are ours until `drop` releases them.

export type RubyValue = number;

type Fn = (...args: number[]) => number;

const decoder = new TextDecoder();
const encoder = new TextEncoder();

export class RubyAbi {
  private exports: Record<string, unknown> = {};
  /** Handles lent to the module for the duration of one call: handle → value. */
  private readonly lent = new Map<number, number>();
  private nextHandle = 1;

  /** The `canonical_abi` imports the module needs to make and read handles. */
  imports(): Record<string, unknown> {
    return {
      "resource_new_rb-abi-value": (value: number) => {
        const handle = this.nextHandle++;
        this.lent.set(handle, value);
        return handle;
      },
      "resource_get_rb-abi-value": (handle: number) => this.lent.get(handle) ?? 0,
      "resource_drop_rb-abi-value": (handle: number) => {
        this.lent.delete(handle);
      },
      // Values of Ruby's JS interop: never made here, so there is nothing to drop.
      "resource_drop_js-abi-value": () => {},
    };
  }

  bind(instance: WebAssembly.Instance): void {
    const byName: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(instance.exports))
      byName[name.split(":")[0]!] = value;
    this.exports = byName;
  }

  private fn(name: string): Fn {
    const f = this.exports[name];
    if (typeof f !== "function") throw new Error(`ruby.wasm does not export ${name}`);
    return f as Fn;
  }

  private get view(): DataView {
    return new DataView((this.exports.memory as WebAssembly.Memory).buffer);
  }

  private string(s: string): [number, number] {
    const bytes = encoder.encode(s);
    const ptr = this.fn("cabi_realloc")(0, 0, 1, bytes.length);
    new Uint8Array((this.exports.memory as WebAssembly.Memory).buffer).set(bytes, ptr);
    return [ptr, bytes.length];
  }

  /** Takes the value out of a handle the module just returned. */
  private take(handle: number): RubyValue {
    const value = this.lent.get(handle) ?? 0;
    this.lent.delete(handle);
    return value;
  }

  private lend(value: RubyValue): number {
    const handle = this.nextHandle++;
    this.lent.set(handle, value);
    return handle;
  }

  private pair(ret: number): [RubyValue, number] {
    const view = this.view;
    return [this.take(view.getInt32(ret, true)), view.getInt32(ret + 4, true)];
  }

  init(args: string[]): void {
    const list = this.fn("cabi_realloc")(0, 0, 4, args.length * 8);
    for (const [i, arg] of args.entries()) {
      const [ptr, len] = this.string(`${arg}\0`);
      this.view.setInt32(list + i * 8, ptr, true);
      this.view.setInt32(list + i * 8 + 4, len, true);
    }
    this.fn("ruby-init")(list, args.length);
  }

  /** Evaluates `code` at the top level; state 0 means no exception. */
  evalProtect(code: string): [RubyValue, number] {
    const [ptr, len] = this.string(`${code}\0`);
    return this.pair(this.fn("rb-eval-string-protect")(ptr, len));
  }

  /** Calls `method` (an interned id) with no arguments; state 0 means no exception. */
  callProtect(receiver: RubyValue, method: number): [RubyValue, number] {
    const handle = this.lend(receiver);
    try {
      const args = this.fn("cabi_realloc")(0, 0, 4, 0);
      return this.pair(this.fn("rb-funcallv-protect")(handle, method, args, 0));
    } finally {
      this.lent.delete(handle);
    }
  }

  intern(name: string): number {
    const [ptr, len] = this.string(`${name}\0`);
    return this.fn("rb-intern")(ptr, len) >>> 0;
  }

  errinfo(): RubyValue {
    return this.take(this.fn("rb-errinfo")());
  }

  clearErrinfo(): void {
    this.fn("rb-clear-errinfo")();
  }

  /** The bytes of a Ruby String as text. */
  stringOf(value: RubyValue): string {
    const handle = this.lend(value);
    try {
      const ret = this.fn("rstring-ptr")(handle);
      const view = this.view;
      const ptr = view.getInt32(ret, true);
      const len = view.getInt32(ret + 4, true);
      const text = decoder.decode(
        new Uint8Array((this.exports.memory as WebAssembly.Memory).buffer, ptr, len),
      );
      this.fn("cabi_post_rstring-ptr")(ret);
      return text;
    } finally {
      this.lent.delete(handle);
    }
  }

  /** Releases a value the module returned, so that Ruby's GC may collect the object. */
  drop(value: RubyValue): void {
    this.fn("canonical_abi_drop_rb-abi-value")(value);
  }
}
