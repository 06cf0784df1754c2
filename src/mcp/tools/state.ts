// MCP adapter: snapshots of a sandbox's files — snapshot_sandbox, restore_sandbox, fork_sandbox,
// list_snapshots, delete_snapshot. A snapshot holds files only; interpreters after a restore or
// in a fork are fresh (the result of their first run says state_lost).

import { z } from "zod";
import type { SnapshotInfo } from "../../index.js";
import { iso, result } from "../render.js";
import { argSchemas } from "../schemas.js";
import { type ToolContext, type ToolDef, tool } from "../tool.js";
import { describe, sandboxShape } from "./sandboxes.js";

const snapshotShape = z.object({
  snapshot_id: z.string(),
  label: z.string().nullable(),
  created_at: z.string(),
  sandbox_id: z.string().describe("The sandbox it was taken of"),
  sandbox_name: z.string().nullable(),
  files: z.number(),
  bytes: z.number().describe("The files' bytes as the workspace held them"),
});

const snapshotId = z
  .string()
  .describe("Id of a snapshot from snapshot_sandbox (list_snapshots lists yours)");

function shape(s: SnapshotInfo) {
  return {
    snapshot_id: s.id,
    label: s.label,
    created_at: iso(s.createdAt),
    sandbox_id: s.sandboxId,
    sandbox_name: s.sandboxName,
    files: s.files,
    bytes: s.bytes,
  };
}

export function stateTools({ service, caller }: ToolContext): ToolDef[] {
  const a = argSchemas(service.runtime.maxLimits);
  return [
    tool({
      name: "snapshot_sandbox",
      title: "Snapshot a sandbox's files",
      description:
        "Record a sandbox's files as a snapshot and return its snapshot_id, for restore_sandbox or fork_sandbox later. Files only: interpreter state (variables) is not captured. A snapshot of an ephemeral sandbox goes when that sandbox is closed; a named sandbox's, when it is deleted.",
      input: {
        sandbox_id: a.sandboxId,
        label: z.string().max(200).optional().describe("A note to tell snapshots apart"),
      },
      output: { snapshot_id: z.string(), snapshot: snapshotShape },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      run: async ({ sandbox_id, label }) => {
        const s = await service.snapshotSandbox(caller, sandbox_id, label);
        return result(
          { snapshot_id: s.id, snapshot: shape(s) },
          `snapshot ${s.id} of sandbox ${sandbox_id}: ${s.files} files, ${s.bytes} bytes`,
        );
      },
    }),
    tool({
      name: "restore_sandbox",
      title: "Restore a sandbox's files",
      description:
        "Put a sandbox's files back as a snapshot recorded them (files added since are removed). Its interpreters are replaced: variables are gone and the next run says state_lost; Python packages it installed are installed again.",
      input: { sandbox_id: a.sandboxId, snapshot_id: snapshotId },
      output: { sandbox_id: z.string(), snapshot: snapshotShape },
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: false,
      },
      run: async ({ sandbox_id, snapshot_id }) => {
        const s = await service.restoreSandbox(caller, sandbox_id, snapshot_id);
        return result(
          { sandbox_id, snapshot: shape(s) },
          `restored sandbox ${sandbox_id} to snapshot ${s.id} (${s.files} files); its interpreters are fresh`,
        );
      },
    }),
    tool({
      name: "fork_sandbox",
      title: "Fork a sandbox",
      description:
        "Make a new sandbox with the files of one of your sandboxes (as they are now) or of a snapshot. Named and persistent if name is given, else ephemeral. The fork and its source change independently afterwards; interpreters in the fork start fresh.",
      input: {
        sandbox_id: a.sandboxId.optional().describe("Fork this sandbox's files as they are now"),
        snapshot_id: snapshotId.optional().describe("Or fork this snapshot"),
        name: z
          .string()
          .optional()
          .describe("Name for a new named sandbox (a name not in use); omit for an ephemeral fork"),
        language: a.language.optional().describe("Default language for execute_code in the fork"),
      },
      output: { sandbox_id: z.string(), sandbox: sandboxShape },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      run: async ({ sandbox_id, snapshot_id, name, language }) => {
        const info = await service.forkSandbox(
          caller,
          {
            ...(sandbox_id !== undefined ? { sandboxId: sandbox_id } : {}),
            ...(snapshot_id !== undefined ? { snapshotId: snapshot_id } : {}),
          },
          {
            ...(name !== undefined ? { name } : {}),
            ...(language !== undefined ? { language } : {}),
          },
        );
        return result(
          { sandbox_id: info.id, sandbox: describe(info) },
          `forked ${sandbox_id ?? snapshot_id} into ${info.name ? `sandbox "${info.name}" ` : "sandbox "}${info.id} (${info.fileCount} files)`,
        );
      },
    }),
    tool({
      name: "list_snapshots",
      title: "List snapshots",
      description:
        "Your snapshots, oldest first (of one sandbox with sandbox_id). Other clients' snapshots are never shown.",
      input: { sandbox_id: a.sandboxId.optional().describe("Only this sandbox's snapshots") },
      output: { snapshots: z.array(snapshotShape) },
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
      run: async ({ sandbox_id }) => {
        const list = (await service.listSnapshots(caller, sandbox_id)).map(shape);
        const text =
          list.length === 0
            ? "(no snapshots)"
            : list
                .map(
                  (s) =>
                    `${s.snapshot_id}${s.label ? ` "${s.label}"` : ""}: ${s.files} files, ${s.bytes} bytes, of ${s.sandbox_name ? `"${s.sandbox_name}"` : s.sandbox_id}, ${s.created_at}`,
                )
                .join("\n");
        return result({ snapshots: list }, text);
      },
    }),
    tool({
      name: "delete_snapshot",
      title: "Delete a snapshot",
      description: "Delete one of your snapshots, freeing what it alone held.",
      input: { snapshot_id: snapshotId },
      output: { snapshot_id: z.string(), deleted: z.boolean() },
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
      run: async ({ snapshot_id }) => {
        await service.deleteSnapshot(caller, snapshot_id);
        return result({ snapshot_id, deleted: true }, `deleted snapshot ${snapshot_id}`);
      },
    }),
  ];
}
