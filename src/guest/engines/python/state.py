# Python side of capturing and restoring a Python interpreter's state, loaded at boot beside the
# runner (whose `_user_globals` it reads and fills). Pyodide cannot snapshot a live interpreter's
# memory once JavaScript holds references into it (every booted engine does), so what is faithful
# is the user's global names: each value that pickles on its own is kept by value; a module is
# kept by name and imported again; anything else (a function or class defined in the session, an
# instance of such a class, a generator, an open file, a JavaScript proxy) is listed as not kept,
# never restored as something it was not. Standard pickle would record a function or class of
# the session by reference, which a new interpreter could not resolve: those are refused here.
# Run at boot after the runner (engine.ts); engine.ts calls both functions.

def _polybox_capture_state(max_bytes):
    import io, pickle, types
    main = _user_globals.get("__name__", "__main__")

    class _Pickler(pickle.Pickler):
        def reducer_override(self, obj):
            if isinstance(obj, (type, types.FunctionType)) and getattr(obj, "__module__", None) == main:
                raise pickle.PicklingError(f"{getattr(obj, '__qualname__', '?')} is defined in the session")
            return NotImplemented

    modules, values, not_kept, total = {}, {}, [], 0
    for name, value in list(_user_globals.items()):
        if name.startswith("__") and name.endswith("__"):
            continue
        if isinstance(value, types.ModuleType):
            modules[name] = value.__name__
            continue
        buffer = io.BytesIO()
        try:
            _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
        except BaseException as e:
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            reason = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
            not_kept.append(f"{name[:80]} ({type(value).__name__}: {reason})")
            continue
        data = buffer.getvalue()
        if total + len(data) > max_bytes:
            not_kept.append(f"{name[:80]} ({type(value).__name__}: over the state's size limit)")
            continue
        total += len(data)
        values[name] = data
    blob = pickle.dumps({"version": 1, "modules": modules, "values": values}, protocol=pickle.HIGHEST_PROTOCOL)
    return blob, not_kept

def _polybox_restore_state(data):
    import importlib, pickle
    state = pickle.loads(bytes(data))
    if not isinstance(state, dict) or state.get("version") != 1:
        raise ValueError("not a polybox Python state")
    not_kept = []

    def restore(name, load, what):
        try:
            _user_globals[name] = load()
        except BaseException as e:
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            not_kept.append(f"{name[:80]} ({what}{type(e).__name__}: {str(e)[:120]})")

    for name, module in state["modules"].items():
        restore(name, lambda: importlib.import_module(module), f"module {module[:80]}: ")
    for name, blob in state["values"].items():
        restore(name, lambda: pickle.loads(blob), "")
    return not_kept
