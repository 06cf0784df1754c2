// MCP adapter: workspace files — list_files, read_file, write_file, and upload_file (a host file
// copied in; the service allows only paths under the operator's --allow-read grants).

import { z } from "zod";
import { PolyboxError } from "../../index.js";
import { result } from "../render.js";
import { argSchemas } from "../schemas.js";
import { type ToolContext, type ToolDef, tool } from "../tool.js";

const INLINE_IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const path = z
  .string()
  .describe(
    'Workspace path, relative to /workspace (e.g. "data.csv" or "out/plot.png"); ".." may not leave the workspace',
  );

export function fileTools({ service }: ToolContext): ToolDef[] {
  const a = argSchemas(service.runtime.maxLimits);
  return [
    tool({
      name: "list_files",
      title: "List sandbox files",
      description:
        "List the files and directories in a sandbox's workspace (recursively), with sizes and modification times.",
      input: {
        sandbox_id: a.sandboxId,
        path: path.optional().describe("Directory to list; the whole workspace if omitted"),
      },
      output: {
        files: z.array(
          z.object({
            path: z.string(),
            type: z.enum(["file", "directory"]),
            size: z.number(),
            modified_at: z.string(),
          }),
        ),
      },
      annotations: { readOnlyHint: true },
      run: async ({ sandbox_id, path: dir }) => {
        const files = (await service.listFiles(sandbox_id, dir)).map((f) => ({
          path: f.path,
          type: f.type,
          size: f.size,
          modified_at: new Date(f.mtimeMs).toISOString(),
        }));
        const text =
          files.length === 0
            ? "(no files)"
            : files
                .map((f) => (f.type === "directory" ? `${f.path}/` : `${f.path}  ${f.size} bytes`))
                .join("\n");
        return result({ files }, text);
      },
    }),
    tool({
      name: "read_file",
      title: "Read a sandbox file",
      description:
        "Read a file from a sandbox's workspace. Text comes back as text (encoding utf8); binary files as base64 with their mime type; PNG, JPEG, GIF and WebP images are also attached as images.",
      input: { sandbox_id: a.sandboxId, path },
      output: {
        path: z.string(),
        size: z.number(),
        mime_type: z.string(),
        encoding: z.enum(["utf8", "base64"]),
        content: z.string(),
      },
      annotations: { readOnlyHint: true },
      run: async ({ sandbox_id, path: p }) => {
        const file = await service.readFile(sandbox_id, p);
        const head = `${file.path} (${file.mimeType}, ${file.size} bytes)`;
        if (file.text !== null) {
          return result(
            {
              path: file.path,
              size: file.size,
              mime_type: file.mimeType,
              encoding: "utf8",
              content: file.text,
            },
            `--- ${head} ---\n${file.text}`,
          );
        }
        const data = Buffer.from(file.bytes).toString("base64");
        const structured = {
          path: file.path,
          size: file.size,
          mime_type: file.mimeType,
          encoding: "base64",
          content: data,
        };
        if (INLINE_IMAGES.has(file.mimeType)) {
          return result(structured, `${head}: image attached`, [
            { type: "image", data, mimeType: file.mimeType },
          ]);
        }
        return result(structured, `${head}, binary, base64:\n${data}`);
      },
    }),
    tool({
      name: "write_file",
      title: "Write a sandbox file",
      description:
        "Create or overwrite a file in a sandbox's workspace (parent directories are created). content is text, or base64 with encoding: base64 for binary data.",
      input: {
        sandbox_id: a.sandboxId,
        path,
        content: z.string().describe("The file's content"),
        encoding: z
          .enum(["utf8", "base64"])
          .optional()
          .describe("How content is encoded: utf8 (default) or base64"),
      },
      output: { path: z.string(), size: z.number() },
      annotations: { destructiveHint: true },
      run: async ({ sandbox_id, path: p, content, encoding }) => {
        let data: string | Uint8Array = content;
        if (encoding === "base64") {
          const compact = content.replace(/\s+/g, "");
          if (compact.length % 4 !== 0 || !BASE64.test(compact)) {
            throw new PolyboxError(
              "INVALID_ARGUMENT",
              "content is not valid base64 (A-Z, a-z, 0-9, +, /, padded with = to a multiple of 4); send text with encoding utf8 instead",
            );
          }
          data = new Uint8Array(Buffer.from(compact, "base64"));
        }
        const written = await service.writeFile(sandbox_id, p, data);
        return result(written, `wrote ${written.path} (${written.size} bytes)`);
      },
    }),
    tool({
      name: "upload_file",
      title: "Upload a host file",
      description:
        "Copy a file from the server's machine into a sandbox's workspace. Only files under directories the operator granted with --allow-read are readable; anything else is refused.",
      input: {
        sandbox_id: a.sandboxId,
        local_path: z.string().describe("Absolute path of the file on the server's machine"),
        path: path.optional().describe("Destination in the workspace; defaults to the file's name"),
      },
      output: { path: z.string(), size: z.number() },
      annotations: { destructiveHint: false },
      run: async ({ sandbox_id, local_path, path: dest }) => {
        const copied = await service.uploadFile(sandbox_id, local_path, dest);
        return result(copied, `uploaded ${local_path} to ${copied.path} (${copied.size} bytes)`);
      },
    }),
  ];
}
