// Trusted side: a sandbox's files as its caller reads and writes them, each call queued behind
// the sandbox's runs.

import { PolyboxError } from "../errors.js";
import type { FileInfo } from "../types.js";
import { resolveWorkspacePath } from "./names.js";
import type { Workspace } from "./workspace.js";

/** What SandboxFiles uses of its sandbox. */
export interface FilesOwner {
  readonly workspace: Workspace;
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  assertOpen(): void;
}

export class SandboxFiles {
  /** @internal */
  constructor(private readonly sandbox: FilesOwner) {}

  /** Writes text (UTF-8) or bytes to a workspace path, creating parent directories. */
  async write(path: string, data: string | Uint8Array): Promise<void> {
    if (typeof data !== "string" && !(data instanceof Uint8Array)) {
      throw new PolyboxError("INVALID_ARGUMENT", "file content must be a string or a Uint8Array");
    }
    const rel = resolveWorkspacePath(path, { file: true });
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    await this.sandbox.exclusive(() => this.sandbox.workspace.write(rel, bytes));
  }

  /** Reads a file as bytes, or as text when `encoding` is "utf8". */
  read(path: string): Promise<Uint8Array>;
  read(path: string, encoding: "utf8"): Promise<string>;
  async read(path: string, encoding?: "utf8"): Promise<Uint8Array | string> {
    const rel = resolveWorkspacePath(path);
    const bytes = await this.sandbox.exclusive(() => this.sandbox.workspace.read(rel));
    return encoding === "utf8" ? new TextDecoder().decode(bytes) : bytes;
  }

  /** Lists files and directories under `path` (the whole workspace by default), recursively. */
  async list(path = ""): Promise<FileInfo[]> {
    const rel = resolveWorkspacePath(path, { allowRoot: true });
    this.sandbox.assertOpen();
    return this.sandbox.workspace.list(rel);
  }

  /** Removes a file or a directory tree. */
  async remove(path: string): Promise<void> {
    const rel = resolveWorkspacePath(path);
    await this.sandbox.exclusive(async () => {
      await this.sandbox.workspace.remove(rel);
    });
  }
}
