# The modules the runner (and the state capture) import while an interpreter boots, imported
# instead by the process that builds the Pyodide memory snapshot, so that every interpreter
# starts with them loaded (what a boot cost most: ~450 ms of CPU). Nothing here draws entropy
# that the snapshot would freeze: `random`, which does, is reseeded at each boot.
import asyncio, concurrent.futures.thread, hashlib, http.client, importlib, io, json, pickle, socket
import sysconfig, threading, time, traceback, types, urllib.error, urllib.request, urllib.response
import warnings, zipfile
import pyodide.code, pyodide.ffi, pyodide.http._pyfetch
