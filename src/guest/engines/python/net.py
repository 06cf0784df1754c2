# The guest's network in Pyodide: urllib.request (every opener, also one built with an SSL
# context, gets a handler that sends the request through polybox's bridge),
# pyodide.http.pyfetch (its fetcher is the bridged fetch), http.client's HTTPConnection and
# HTTPSConnection (the stdlib builds the request bytes; `send` keeps them and `getresponse`
# sends them through the bridge, answering with a real HTTPResponse parsed from the reply), and
# requests (its HTTPAdapter.send, patched when requests.adapters is imported, as pyodide-http
# does, so any requests version works), and urllib3 on its own (HTTPConnectionPool.urlopen,
# patched the same way; the trusted side follows redirects when urllib3 is asked to). `call`
# blocks until the trusted side answers; what it may reach is the trusted side's decision.
# Part of the Pyodide runner (sources.ts); engine.ts calls _install_net once at boot.
def _install_net(call, fetch):
    import http.client, io, json, urllib.error, urllib.request, urllib.response
    from pyodide.ffi import to_js

    def _send(method, url, headers, body, redirect="follow"):
        if body is not None:
            if isinstance(body, str):
                body = body.encode()
            elif hasattr(body, "read"):
                body = body.read()
            elif not isinstance(body, (bytes, bytearray, memoryview)):
                body = b"".join(body)
            body = to_js(bytes(body))
        reply = call(method, url, json.dumps(headers), body, redirect)
        meta = json.loads(reply.meta)
        if not meta["ok"]:
            raise urllib.error.URLError(meta["message"])
        data = reply.body.to_bytes() if getattr(reply, "body", None) is not None else b""
        return meta, data

    class PolyboxHandler(urllib.request.BaseHandler):
        """Opens http and https URLs through polybox's trusted side."""
        handler_order = 100

        def _open(self, req):
            meta, data = _send(req.get_method(), req.full_url, list(req.header_items()), req.data)
            message = http.client.HTTPMessage()
            for name, value in meta["headers"]:
                message[name] = value
            response = urllib.response.addinfourl(io.BytesIO(data), message, meta["url"], meta["status"])
            response.msg = response.reason = meta["statusText"]
            return response

        http_open = https_open = _open

    build_opener = urllib.request.build_opener

    def _build_opener(*handlers):
        return build_opener(PolyboxHandler, *handlers)

    _build_opener.__doc__ = build_opener.__doc__
    urllib.request.build_opener = _build_opener
    urllib.request._opener = None  # urlopen builds its opener with the function above
    import pyodide.http._pyfetch as pyfetch_module
    pyfetch_module._jsfetch = fetch
    _install_http_client(_send)
    _install_requests_hook(_send)


def _install_http_client(_send):
    import http.client, io

    # Hop-by-hop headers: the body arrives whole, so its length is what it is.
    _DROP = {"transfer-encoding", "content-length", "connection", "keep-alive"}

    class _ReplySocket:
        """What HTTPResponse reads: the reply, as the bytes a server would have sent."""
        def __init__(self, data):
            self._data = data

        def makefile(self, mode="rb", *args, **kwargs):
            return io.BytesIO(self._data)

        def close(self):
            pass

    def _response(meta, data, method, debuglevel=0):
        head = ["HTTP/1.1 %d %s" % (meta["status"], meta["statusText"] or "-")]
        for name, value in meta["headers"]:
            if name.lower() not in _DROP:
                head.append("%s: %s" % (name, value))
        no_body = method == "HEAD" or meta["status"] in (204, 304) or 100 <= meta["status"] < 200
        if not no_body:
            head.append("Content-Length: %d" % len(data))
        raw = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1", "replace") + data
        response = http.client.HTTPResponse(_ReplySocket(raw), debuglevel, method=method, url=meta["url"])
        response.begin()
        return response

    def _dechunk(body):
        out, at = [], 0
        while True:
            end = body.index(b"\r\n", at)
            size = int(body[at:end].split(b";")[0], 16)
            if size == 0:
                return b"".join(out)
            out.append(body[end + 2:end + 2 + size])
            at = end + 4 + size

    class HTTPConnection(http.client.HTTPConnection):
        """http.client.HTTPConnection over polybox's bridge: no socket, one exchange per request."""
        _scheme = "http"

        def connect(self):
            pass

        def close(self):
            self._polybox_out = b""
            super().close()

        def send(self, data):
            if hasattr(data, "read"):
                chunks = []
                while True:
                    block = data.read(self.blocksize)
                    if not block:
                        break
                    chunks.append(block.encode("iso-8859-1") if isinstance(block, str) else block)
                data = b"".join(chunks)
            elif not isinstance(data, (bytes, bytearray, memoryview)):
                data = b"".join(bytes(d) for d in data)
            self._polybox_out = getattr(self, "_polybox_out", b"") + bytes(data)

        def getresponse(self):
            raw, self._polybox_out = getattr(self, "_polybox_out", b""), b""
            if not raw:
                raise http.client.ResponseNotReady("no request was sent")
            head, _, body = raw.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target, _version = lines[0].split(" ", 2)
            headers, chunked = [], False
            for line in lines[1:]:
                name, _, value = line.partition(":")
                value = value.strip()
                if name.lower() == "transfer-encoding" and "chunked" in value.lower():
                    chunked = True
                    continue
                if name.lower() in ("content-length", "host", "connection"):
                    continue
                headers.append([name, value])
            if chunked:
                body = _dechunk(body)
            if target.startswith("http://") or target.startswith("https://"):
                url = target
            else:
                host = self.host if ":" not in self.host else "[%s]" % self.host
                url = "%s://%s:%d%s" % (self._scheme, host, self.port, target)
            self._HTTPConnection__state = http.client._CS_IDLE
            try:
                meta, data = _send(method, url, headers, body if body or method in ("POST", "PUT", "PATCH") else None, "manual")
            except Exception as error:
                raise ConnectionRefusedError(str(getattr(error, "reason", error))) from None
            return _response(meta, data, method, self.debuglevel)

    class HTTPSConnection(HTTPConnection):
        """https through the bridge: the trusted side makes the TLS connection and checks it."""
        _scheme = "https"
        default_port = http.client.HTTPS_PORT

        def __init__(self, host, port=None, *args, key_file=None, cert_file=None, context=None, check_hostname=None, **kwargs):
            super().__init__(host, port, *args, **kwargs)

    HTTPConnection.__module__ = HTTPSConnection.__module__ = "http.client"
    http.client.HTTPConnection = HTTPConnection
    http.client.HTTPSConnection = HTTPSConnection
    if "HTTPSConnection" not in http.client.__all__:
        http.client.__all__.append("HTTPSConnection")
    http.client._polybox_response = _response


def _install_requests_hook(_send):
    import importlib.abc, sys

    def patch(adapters):
        import http.client

        def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
            from requests.exceptions import ConnectionError
            from requests.structures import CaseInsensitiveDict
            from requests.utils import get_encoding_from_headers
            from requests.cookies import extract_cookies_to_jar
            from requests.models import Response
            try:
                meta, data = _send(request.method, request.url, list(request.headers.items()), request.body, "manual")
            except Exception as error:
                raise ConnectionError(str(getattr(error, "reason", error)), request=request) from None
            raw = http.client._polybox_response(meta, data, request.method)
            raw._original_response = raw
            response = Response()
            response.status_code = meta["status"]
            headers = CaseInsensitiveDict()
            for name, value in meta["headers"]:
                headers[name] = headers[name] + ", " + value if name in headers else value
            response.headers = headers
            response.encoding = get_encoding_from_headers(headers)
            response.raw = raw
            response.reason = meta["statusText"]
            response.url = request.url
            response.request = request
            response.connection = self
            extract_cookies_to_jar(response.cookies, request, raw)
            if not stream:
                response.content
            return response

        adapters.HTTPAdapter.send = send

    def patch_urllib3(connectionpool):
        import http.client

        def urlopen(self, method, url, body=None, headers=None, retries=None, redirect=True,
                    assert_same_host=True, timeout=None, pool_timeout=None, release_conn=None,
                    chunked=False, body_pos=None, preload_content=True, decode_content=True, **kw):
            from urllib3._collections import HTTPHeaderDict
            from urllib3.exceptions import MaxRetryError, NewConnectionError
            from urllib3.response import HTTPResponse
            if "://" not in url:
                host = self.host if ":" not in self.host else "[%s]" % self.host
                port = self.port or (443 if self.scheme == "https" else 80)
                url = "%s://%s:%d%s" % (self.scheme, host, port, url)
            try:
                meta, data = _send(method, url, list((headers or {}).items()), body,
                                   "follow" if redirect else "manual")
            except Exception as error:
                reason = str(getattr(error, "reason", error))
                raise MaxRetryError(self, url, reason=NewConnectionError(self, reason)) from None
            raw = http.client._polybox_response(meta, data, method)
            received = HTTPHeaderDict()
            for name, value in meta["headers"]:
                received.add(name, value)
            return HTTPResponse(body=raw, headers=received, status=meta["status"],
                                reason=meta["statusText"], preload_content=preload_content,
                                decode_content=decode_content, original_response=raw,
                                request_method=method, request_url=url)

        connectionpool.HTTPConnectionPool.urlopen = urlopen

    patches = {"requests.adapters": patch, "urllib3.connectionpool": patch_urllib3}

    class _Loader(importlib.abc.Loader):
        def __init__(self, inner, patcher):
            self.inner = inner
            self.patcher = patcher

        def create_module(self, spec):
            return self.inner.create_module(spec)

        def exec_module(self, module):
            self.inner.exec_module(module)
            self.patcher(module)

    class _Hook(importlib.abc.MetaPathFinder):
        """Patches requests and urllib3 as they are imported (they may be installed later)."""
        def find_spec(self, name, path, target=None):
            if name not in patches:
                return None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    if spec.loader is not None:
                        spec.loader = _Loader(spec.loader, patches[name])
                    return spec
            return None

    sys.meta_path.insert(0, _Hook())
    for name, patcher in patches.items():
        if name in sys.modules:
            patcher(sys.modules[name])
