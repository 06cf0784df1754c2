// WASI test programs, written in WebAssembly text and assembled here with wabt, so that the
// tests need no prebuilt binaries and every byte a test runs is visible in the test tree.
// `wasiProgram(body)` wraps a `_start` body with the WASI imports and helpers the programs share:
// `$print(ptr, len)` to stdout, `$exit(code)`, and a scratch area from byte 0 to 1023.

import wabtInit from "wabt";

const wabt = await wabtInit();

/**
 * `threads`: allow shared memory and atomics. wabt's validator refuses shared memory even then
 * ("memories may not be shared"), so such a module is not validated here: the engine that
 * compiles it is its validator.
 */
export function wat(source: string, options: { threads?: boolean } = {}): Uint8Array {
  const module = wabt.parseWat("test.wat", source, options.threads ? { threads: true } : {});
  try {
    module.resolveNames();
    if (!options.threads) module.validate();
    return module.toBinary({}).buffer;
  } finally {
    module.destroy();
  }
}

const IMPORTS = `
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))`;

const HELPERS = `
  (func $write (param $fd i32) (param $ptr i32) (param $len i32) (result i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8)))
  (func $print (param $ptr i32) (param $len i32)
    (drop (call $write (i32.const 1) (local.get $ptr) (local.get $len))))
  ;; Writes errno as two decimal digits and a newline to stdout.
  (func $print_errno (param $e i32)
    (i32.store8 (i32.const 16) (i32.add (i32.const 48) (i32.div_u (local.get $e) (i32.const 10))))
    (i32.store8 (i32.const 17) (i32.add (i32.const 48) (i32.rem_u (local.get $e) (i32.const 10))))
    (i32.store8 (i32.const 18) (i32.const 10))
    (call $print (i32.const 16) (i32.const 3)))`;

/** A WASI command: imports, helpers, one page of memory, `data` segments and a `_start` body. */
export function wasiProgram(body: string, data = "", memoryPages = 1): Uint8Array {
  return wat(`(module ${IMPORTS}
  (memory (export "memory") ${memoryPages})
  ${data}
  ${HELPERS}
  (func (export "_start") ${body}))`);
}

/** A string placed at `offset` in memory, for `(call $print (i32.const offset) (i32.const len))`. */
export function dataString(offset: number, text: string): string {
  return `(data (i32.const ${offset}) ${JSON.stringify(text)})`;
}

/**
 * `path_open` relative to preopen `dirFd` (3 = /workspace, 4 = /tmp) with the path stored at 2048;
 * prints the errno (00 on success) and, when asked, writes or reads through the opened fd.
 */
export function openAndReport(dirFd: number, path: string, create = false): Uint8Array {
  const bytes = Buffer.byteLength(path);
  const oflags = create ? 1 : 0; // O_CREAT
  return wasiProgram(
    `(call $print_errno (call $path_open (i32.const ${dirFd}) (i32.const 0) (i32.const 2048)
       (i32.const ${bytes}) (i32.const ${oflags}) (i64.const -1) (i64.const -1) (i32.const 0)
       (i32.const 32)))`,
    dataString(2048, path),
  );
}
