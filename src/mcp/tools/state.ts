// MCP adapter: snapshots of a sandbox — snapshot_sandbox, restore_sandbox, fork_sandbox,
// list_snapshots, delete_snapshot. A snapshot holds the files and, per language, what of its
// interpreter's state the engine captures faithfully (`state`); an interpreter with none is fresh
// after a restore or in a fork (the result of its first run says state_lost).

import { z } from "zod";
import type { SnapshotInfo } from "../../index.js";
import { iso, result } from "../render.js";
import { argSchemas } from "../schemas.js";
import { CREATES, READS, REPLACES, type ToolContext, type ToolDef, tool } from "../tool.js";
import { describe, sandboxShape } from "./sandboxes.js";

const snapshotShape = z.object({
  snapshot_id: z.string(),
  label: z.string().nullable(),
  created_at: z.string(),
  sandbox_id: z.string().describe("The sandbox it was taken of"),
  sandbox_name: z.string().nullable(),
  files: z.number(),
  bytes: z.number().describe("The files' bytes as the workspace held them"),
  state: z
    .record(
      z.string(),
      z.object({
        kept: z
          .enum(["memory", "globals", "none"])
          .describe(
            "memory: the whole interpreter comes back; globals: global values that could be pickled, and imported modules; none: a fresh interpreter",
          ),
        bytes: z.number(),
        not_kept: z.array(z.string()).optional().describe("Names not kept, and why"),
        reason: z.string().optional().describe("Why nothing was kept"),
      }),
    )
    .describe("Per language the sandbox had an interpreter of: what a restore brings back"),
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
    state: Object.fromEntries(
      Object.entries(s.state).map(([language, st]) => [
        language,
        {
          kept: st.kept,
          bytes: st.bytes,
          ...(st.notKept ? { not_kept: st.notKept } : {}),
          ...(st.reason ? { reason: st.reason } : {}),
        },
      ]),
    ),
  };
}

/** One line per language: what the snapshot keeps of its interpreter. */
function stateText(s: SnapshotInfo): string {
  const parts = Object.entries(s.state).map(
    ([language, st]) =>
      `${language}: ${st.kept}${st.notKept?.length ? ` (not kept: ${st.notKept.join("; ")})` : ""}`,
  );
  return parts.length > 0 ? `; interpreter state: ${parts.join(", ")}` : "";
}

export function stateTools({ service, caller }: ToolContext): ToolDef[] {
  const a = argSchemas(service.runtime.maxLimits);
  return [
    tool({
      name: "snapshot_sandbox",
      title: "Snapshot a sandbox",
      description:
        "Record a sandbox's files and interpreter state as a snapshot and return its snapshot_id, for restore_sandbox or fork_sandbox later. State per language (snapshot.state): JavaScript/TypeScript keep the whole interpreter (memory); Python keeps global values that can be pickled and imported modules, listing names not kept; Bash, Ruby and native-mode interpreters keep none. A snapshot of an ephemeral sandbox goes when that sandbox is closed; a named sandbox's, when it is deleted.",
      input: {
        sandbox_id: a.sandboxId,
        label: z.string().max(200).optional().describe("A note to tell snapshots apart"),
      },
      output: { snapshot_id: z.string(), snapshot: snapshotShape },
      annotations: CREATES,
      run: async ({ sandbox_id, label }) => {
        const s = await service.snapshotSandbox(caller, sandbox_id, label);
        return result(
          { snapshot_id: s.id, snapshot: shape(s) },
          `snapshot ${s.id} of sandbox ${sandbox_id}: ${s.files} files, ${s.bytes} bytes${stateText(s)}`,
        );
      },
    }),
    tool({
      name: "restore_sandbox",
      title: "Restore a sandbox",
      description:
        "Put a sandbox's files back as a snapshot recorded them (files added since are removed), and its interpreters as the snapshot's state says (snapshot.state): each language's next run gets that state back, or starts fresh and says state_lost; its notes say which. Python packages it installed are installed again.",
      input: { sandbox_id: a.sandboxId, snapshot_id: snapshotId },
      output: { sandbox_id: z.string(), snapshot: snapshotShape },
      annotations: REPLACES,
      run: async ({ sandbox_id, snapshot_id }) => {
        const s = await service.restoreSandbox(caller, sandbox_id, snapshot_id);
        return result(
          { sandbox_id, snapshot: shape(s) },
          `restored sandbox ${sandbox_id} to snapshot ${s.id} (${s.files} files${stateText(s)})`,
        );
      },
    }),
    tool({
      name: "fork_sandbox",
      title: "Fork a sandbox",
      description:
        "Make a new sandbox with the files of one of your sandboxes (as they are now) or of a snapshot. Named and persistent if name is given, else ephemeral. The fork gets the source's interpreter state as a snapshot would keep it (see snapshot_sandbox); the fork and its source change independently afterwards.",
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
      annotations: CREATES,
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
      annotations: READS,
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
