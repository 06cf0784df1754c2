// Untrusted side: the machine every language's guest is told it runs on. Bash's `id`, `hostname`
// and /etc files, Python's environment, `pwd` and `socket.gethostname()`, and JavaScript's `os`
// all read it here, so the three never disagree; none of it is the server's own.

export const MACHINE = {
  user: "user",
  uid: 1000,
  gid: 1000,
  host: "localhost",
  home: "/workspace",
  /** just-bash's own PATH, which the other languages repeat. */
  path: "/usr/bin:/bin",
} as const;
