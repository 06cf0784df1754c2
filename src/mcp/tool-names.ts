// MCP adapter: every tool's name, by kind, in the order tools/list gives them (README's tool table
// follows it): running code first, as most calls do; then a sandbox's lifecycle, its files, its
// snapshots, and the async jobs' tools. A definition in tools/ may take only a name listed here,
// and what routes calls by kind (the cluster's router) reads the kinds from here.

export const TOOLS = {
  /** Run code: wait for the answer, or start a job (async: true, or an MCP task). */
  run: ["execute_python", "execute_javascript", "execute_bash", "execute_code", "create_run_close"],
  sandbox: ["create_sandbox", "get_sandbox_status", "install_package", "close_sandbox"],
  file: ["list_files", "read_file", "write_file", "upload_file"],
  snapshot: [
    "snapshot_sandbox",
    "restore_sandbox",
    "fork_sandbox",
    "list_snapshots",
    "delete_snapshot",
  ],
  /** Read or cancel a job a run tool started. */
  job: ["check_job_status", "get_job_logs", "cancel_job"],
} as const;

export type ToolName = (typeof TOOLS)[keyof typeof TOOLS][number];

/** Every tool, in tools/list order. */
export const TOOL_NAMES: readonly ToolName[] = Object.values(TOOLS).flat();
