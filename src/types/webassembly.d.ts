// The slice of the WebAssembly JS API that polybox uses. TypeScript ships these types only in its
// DOM library, which a Node program should not pull in.

declare namespace WebAssembly {
  class Module {
    constructor(bytes: BufferSource);
    static imports(module: Module): { module: string; name: string; kind: string }[];
    static exports(module: Module): { name: string; kind: string }[];
  }
  class Instance {
    readonly exports: Record<string, unknown>;
  }
  class Memory {
    readonly buffer: ArrayBuffer;
    grow(delta: number): number;
  }
  type Imports = Record<string, Record<string, unknown>>;
  type BufferSource = ArrayBufferView | ArrayBuffer;
  interface InstantiatedSource {
    instance: Instance;
    module: Module;
  }
  function compile(bytes: BufferSource): Promise<Module>;
  function instantiate(module: Module, imports?: Imports): Promise<Instance>;
  function instantiate(bytes: BufferSource, imports?: Imports): Promise<InstantiatedSource>;
}
