# What CPython has and Pyodide's build lacks, put back so that code written for CPython runs:
# `asyncio.run` (Pyodide's loop is the browser's and cannot block: a private loop that sleeps
# between timers runs the coroutine to completion instead, as CPython's does) and
# `hashlib.pbkdf2_hmac` (Pyodide's hashlib has no OpenSSL: RFC 8018's PBKDF2 over hmac); the
# machine a program asks about (the sandbox's user, host and paths, and a `pwd` module); and
# threads that run their target when started, since Pyodide cannot start one.
# Part of the Pyodide runner (sources.ts), after common.py.
def _install_compat():
    import asyncio, hashlib, time
    from asyncio import events

    class _Sleeper:
        """The selector of a loop with no I/O to wait for: it only waits for the next timer."""
        def select(self, timeout):
            if timeout is None:
                raise RuntimeError("asyncio: nothing is scheduled and no I/O can complete in this sandbox; the loop would wait forever")
            if timeout > 0:
                time.sleep(timeout)
            return []

        def close(self):
            pass

    class _BlockingLoop(asyncio.BaseEventLoop):
        def __init__(self):
            super().__init__()
            self._selector = _Sleeper()

        def _process_events(self, event_list):
            pass

        def _write_to_self(self):
            pass

    def run(main, *, debug=None, loop_factory=None):
        # The cell itself runs as a task of Pyodide's loop: step out of it (its running loop and
        # current task) for as long as the private loop runs, as a nested call to CPython's would.
        outer = events._get_running_loop()
        outer_task = asyncio.tasks._swap_current_task(outer, None) if outer else None
        events._set_running_loop(None)
        try:
            with asyncio.Runner(debug=debug, loop_factory=loop_factory or _BlockingLoop) as runner:
                return runner.run(main)
        finally:
            events._set_running_loop(outer)
            if outer:
                asyncio.tasks._swap_current_task(outer, outer_task)

    run.__doc__ = asyncio.run.__doc__
    asyncio.run = run

    if not hasattr(hashlib, "pbkdf2_hmac"):
        def pbkdf2_hmac(hash_name, password, salt, iterations, dklen=None):
            password, salt = bytes(password), bytes(salt)
            if iterations < 1:
                raise ValueError("iteration value must be greater than 0.")
            inner, outer = hashlib.new(hash_name), hashlib.new(hash_name)
            if len(password) > inner.block_size:
                password = hashlib.new(hash_name, password).digest()
            password = password.ljust(inner.block_size, b"\0")
            inner.update(bytes(b ^ 0x36 for b in password))
            outer.update(bytes(b ^ 0x5C for b in password))

            def prf(message):
                i, o = inner.copy(), outer.copy()
                i.update(message)
                o.update(i.digest())
                return o.digest()

            dklen = outer.digest_size if dklen is None else dklen
            if dklen < 1:
                raise ValueError("key length must be greater than 0.")
            key, block = b"", 1
            while len(key) < dklen:
                u = prf(salt + block.to_bytes(4, "big"))
                acc = int.from_bytes(u, "big")
                for _ in range(iterations - 1):
                    u = prf(u)
                    acc ^= int.from_bytes(u, "big")
                key += acc.to_bytes(outer.digest_size, "big")
                block += 1
            return key[:dklen]

        hashlib.pbkdf2_hmac = pbkdf2_hmac

_install_compat()
del _install_compat

def _install_machine(machine):
    """What a program asks about the machine it runs on gets the answers polybox's Bash gives
    (`machine`: common/machine.ts's user, uid, gid, host, home and PATH), never the server's own:
    the interpreter was built by a host process whose path Pyodide took for sys.executable."""
    import os, socket, sys, types
    user, home, host = machine["user"], machine["home"], machine["host"]
    sys.executable = sys._base_executable = "/usr/bin/python3"
    sys.argv[:] = ["-c"]
    sys.orig_argv = ["python3", "-c"]
    os.environ.update({"USER": user, "LOGNAME": user, "PATH": machine["path"], "PWD": home})
    socket.gethostname = lambda: host

    # pwd: Pyodide has none; getpass, os.path.expanduser("~name") and pathlib look users up.
    pwd = types.ModuleType("pwd", "The password database: the sandbox's two users.")
    class struct_passwd(tuple):
        n_sequence_fields = n_fields = 7
        _names = ("pw_name", "pw_passwd", "pw_uid", "pw_gid", "pw_gecos", "pw_dir", "pw_shell")
        def __getattr__(self, name):
            try:
                return self[self._names.index(name)]
            except ValueError:
                raise AttributeError(name) from None
        def __repr__(self):
            return "pwd.struct_passwd(" + ", ".join(f"{n}={v!r}" for n, v in zip(self._names, self)) + ")"
    struct_passwd.__module__ = "pwd"
    users = (
        struct_passwd(("root", "x", 0, 0, "root", "/root", "/bin/bash")),
        struct_passwd((user, "x", machine["uid"], machine["gid"], user, home, "/bin/bash")),
    )
    def getpwuid(uid):
        for entry in users:
            if entry.pw_uid == uid:
                return entry
        raise KeyError(f"getpwuid(): uid not found: {uid}")
    def getpwnam(name):
        for entry in users:
            if entry.pw_name == name:
                return entry
        raise KeyError(f"getpwnam(): name not found: {name!r}")
    pwd.struct_passwd, pwd.getpwuid, pwd.getpwnam = struct_passwd, getpwuid, getpwnam
    pwd.getpwall = lambda: list(users)
    sys.modules["pwd"] = pwd

# `_polybox_machine`: common/machine.ts as JSON, set by the engine before the runner runs.
_install_machine(_json.loads(_polybox_machine))
del _install_machine, _polybox_machine

def _install_threads():
    """Pyodide cannot start a thread. A started thread runs its target to the end at once, in
    the starting thread, and a thread pool runs each submitted call as it is submitted: the
    usual fan-out-and-join programs then give their results, in order. A thread that waits for
    work another thread has not yet done waits until the run's deadline."""
    import threading
    from concurrent.futures import _base, thread as _pool

    def start(self):
        if not self._initialized:
            raise RuntimeError("thread.__init__() not called")
        if self._started.is_set():
            raise RuntimeError("threads can only be started once")
        self._started.set()
        self._polybox_done = False
        try:
            self.run()
        except SystemExit:
            pass
        except BaseException as e:
            threading.excepthook(threading.ExceptHookArgs((type(e), e, e.__traceback__, self)))
        finally:
            self._polybox_done = True

    def join(self, timeout=None):
        if not self._initialized:
            raise RuntimeError("Thread.__init__() not called")
        if not self._started.is_set():
            raise RuntimeError("cannot join thread before it is started")

    def is_alive(self):
        return self._started.is_set() and not getattr(self, "_polybox_done", True)

    threading.Thread.start, threading.Thread.join, threading.Thread.is_alive = start, join, is_alive

    def submit(self, fn, /, *args, **kwargs):
        with self._shutdown_lock:
            if self._broken:
                raise _pool.BrokenThreadPool(self._broken)
            if self._shutdown:
                raise RuntimeError("cannot schedule new futures after shutdown")
        future = _base.Future()
        if future.set_running_or_notify_cancel():
            try:
                result = fn(*args, **kwargs)
            except BaseException as e:
                future.set_exception(e)
            else:
                future.set_result(result)
        return future

    submit.__doc__ = _pool.ThreadPoolExecutor.submit.__doc__
    _pool.ThreadPoolExecutor.submit = submit

_install_threads()
del _install_threads
