"""Real servers on loopback for the remote tests and ``zarrx bench --remote``: an S3 server
(moto in server mode, in its own process) and an HTTP server (nginx, serving a directory with
Range and ETag support).

Each ``start_*`` returns a :class:`Server` (``url``, ``stop()``), or raises
:class:`ServerUnavailable` saying why the server cannot run here.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

__all__ = ["Server", "ServerUnavailable", "free_port", "start_moto", "start_nginx",
           "create_bucket", "reset_moto", "S3_KEYS"]

#: the credentials the S3 test server accepts (any: moto checks none)
S3_KEYS = {"access_key_id": "zarrx-test", "secret_access_key": "zarrx-test-secret",
           "region": "us-east-1"}


class ServerUnavailable(RuntimeError):
    """A server cannot start here; the message says why."""


@dataclass
class Server:
    url: str
    proc: subprocess.Popen | None = None
    workdir: str | None = None
    log: str = ""
    extra: dict = field(default_factory=dict)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(url: str, proc: subprocess.Popen, log_path: str, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerUnavailable(f"{what} exited with status {proc.returncode}: "
                                    f"{_tail(log_path)}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return                               # it answers: any status will do
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise ServerUnavailable(f"{what} did not answer on {url} within {timeout:.0f} s: "
                            f"{_tail(log_path)}")


def _tail(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            return " | ".join(f.read().strip().splitlines()[-5:])
    except OSError:
        return "(no log)"


_MOTO = """\
import io, os, sys
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
port, serial, sliced = int(sys.argv[1]), sys.argv[2] == "serial", sys.argv[3] == "sliced"
os.environ["MOTO_PORT"] = str(port)
if sliced:
    import moto.s3.models as models
    stock = models.FakeKey.value

    def value(key):
        # the stored bytes themselves (BytesIO.getvalue shares its buffer), so that a ranged
        # GET copies its range and not the whole object first
        with key.lock:
            inner = getattr(key._value_buffer, "_file", key._value_buffer)
            if isinstance(inner, io.BytesIO):
                return inner.getvalue()
        return stock.fget(key)

    models.FakeKey.value = property(value, stock.fset)
if serial:
    run_simple("127.0.0.1", port, DomainDispatcherApplication(create_backend_app),
               threaded=False)
else:
    from moto.server import main
    main(["-H", "127.0.0.1", "-p", str(port)])
"""


def start_moto(serial: bool = False, in_memory: int = 0, sliced_ranges: bool = False) -> Server:
    """moto's S3 server in a child process on a free loopback port. ``serial=True`` serves one
    request at a time: moto checks a conditional write and performs it in two steps that
    concurrent requests can interleave (a lost update under contention), so the tests of
    conditional writes under contention need the serial server. The threaded one (default)
    serves requests concurrently, for the benchmark.

    moto keeps each object (and each part of a multipart upload) in memory up to about 5 MiB
    and in a temporary file beyond; ``in_memory`` (bytes) raises that limit, so that the
    server serves larger objects from memory as an object store would from its cache.

    moto answers a ranged GET by copying the whole object out of its buffer and then slicing
    the range (83 ms for any range of a 64 MiB object, against 6 ms once sliced); an object
    store serves a range at the cost of the range. ``sliced_ranges=True`` serves objects held
    in memory that way: the benchmark's server does, the tests' servers run moto as it is."""
    try:
        import moto.server  # noqa: F401
    except ImportError as exc:
        raise ServerUnavailable(f"moto[server] is not installed ({exc}); "
                                "pip install 'moto[server]'") from None
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="zarrx-moto-")
    log = os.path.join(workdir, "moto.log")
    with open(log, "wb") as out:
        cmd = [sys.executable, "-c", _MOTO, str(port), "serial" if serial else "threaded",
               "sliced" if sliced_ranges else "stock"]
        env = dict(os.environ)
        if in_memory:
            env["MOTO_S3_DEFAULT_KEY_BUFFER_SIZE"] = str(in_memory)
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    server = Server(url, proc, workdir, log)
    try:
        _wait(url + "/moto-api/", proc, log, "moto server")
    except BaseException:
        server.stop()
        raise
    return server


def reset_moto(endpoint: str, bucket: str) -> None:
    """Empty an S3 test server (moto's reset: every bucket and object is dropped, and the
    memory they held freed), then create ``bucket`` again."""
    req = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST", data=b"")
    with urllib.request.urlopen(req, timeout=60):
        pass
    create_bucket(endpoint, bucket)


def create_bucket(endpoint: str, bucket: str) -> None:
    """Create ``bucket`` on an S3 test server (a plain PUT: moto checks no signature)."""
    req = urllib.request.Request(f"{endpoint}/{bucket}", method="PUT", data=b"")
    try:
        with urllib.request.urlopen(req, timeout=10):
            pass
    except urllib.error.HTTPError as exc:
        if exc.code != 409:                      # already there
            raise


NGINX_CONF = """\
daemon off;
worker_processes 1;
user root root;
error_log {workdir}/error.log warn;
pid {workdir}/nginx.pid;
events {{ worker_connections 256; }}
http {{
    access_log {workdir}/access.log;
    client_body_temp_path {workdir}/body;
    proxy_temp_path {workdir}/proxy;
    fastcgi_temp_path {workdir}/fastcgi;
    uwsgi_temp_path {workdir}/uwsgi;
    scgi_temp_path {workdir}/scgi;
    sendfile on;
    keepalive_requests 100000;
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        etag on;
    }}
}}
"""


def start_nginx(root: str) -> Server:
    """nginx serving the directory ``root`` read-only (Range requests, ETags, If-Match)."""
    exe = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx")
                                         if os.path.exists(p)), None)
    if exe is None:
        raise ServerUnavailable("nginx is not installed (apt-get install nginx)")
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="zarrx-nginx-")
    conf = os.path.join(workdir, "nginx.conf")
    user_line = "user root root;\n" if os.geteuid() == 0 else ""
    with open(conf, "w") as f:
        f.write(NGINX_CONF.format(workdir=workdir, port=port, root=os.path.abspath(root))
                .replace("user root root;\n", user_line))
    log = os.path.join(workdir, "error.log")
    with open(os.path.join(workdir, "stdout.log"), "wb") as out:
        proc = subprocess.Popen([exe, "-c", conf, "-p", workdir], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    server = Server(url, proc, workdir, log)
    try:
        _wait(url + "/", proc, log, "nginx")
    except BaseException:
        server.stop()
        raise
    return server
