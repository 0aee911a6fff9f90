"""Put the license of every shared library bundled into a repaired wheel into the wheel.

    python packaging/wheel_licenses.py dist/zarrx-*-manylinux*.whl

``auditwheel repair`` copies the shared libraries the extensions link (libzstd, libblosc, and
what they link in turn) into ``zarrx.libs/`` under hashed names (``libzstd-1a2b3c4d.so.1.5.4``).
For each one this finds the system file it was copied from, the Debian package that installed
it (``dpkg -S``) and that package's ``/usr/share/doc/<package>/copyright``, and adds it to the
wheel as ``<dist-info>/licenses/<library>.txt`` (RECORD is rewritten). A bundled library
whose license cannot be found stops the script with an error: no wheel leaves without them.
"""
from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile

LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib/x86_64-linux-gnu",
            "/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib")
HASHED = re.compile(r"^(?P<stem>lib[^/]*?)-[0-9a-f]{8}(?P<rest>\.so.*)$")


def original_name(bundled: str) -> str:
    """``libzstd-1a2b3c4d.so.1.5.4`` -> ``libzstd.so.1.5.4``."""
    m = HASHED.match(bundled)
    if m is None:
        raise SystemExit(f"wheel_licenses: {bundled!r}: not a name auditwheel gives a bundled "
                         f"library (lib<name>-<8 hex digits>.so...)")
    return m["stem"] + m["rest"]


def system_file(name: str) -> str:
    for d in LIB_DIRS:
        path = os.path.join(d, name)
        if os.path.exists(path):
            return os.path.realpath(path)
    raise SystemExit(f"wheel_licenses: {name}: not found in {', '.join(LIB_DIRS)}")


def package_of(path: str) -> str:
    for candidate in (path, path.replace("/usr/lib/", "/lib/", 1)):
        out = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if out.returncode == 0:
            return out.stdout.split(":", 1)[0].strip()
    raise SystemExit(f"wheel_licenses: {path}: no Debian package owns it (dpkg -S); bundle "
                     f"libraries from Debian packages, whose licenses are known")


def license_text(package: str) -> str:
    path = f"/usr/share/doc/{package}/copyright"
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as exc:
        raise SystemExit(f"wheel_licenses: {package}: cannot read {path}: {exc}") from None


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def add_licenses(wheel: str) -> list[str]:
    """Rewrite ``wheel`` with the licenses of its bundled libraries; returns the files added."""
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        entries = {n: zf.read(n) for n in names}
        infos = {n: zf.getinfo(n) for n in names}
    libs = sorted(n for n in names if ".libs/" in n and ".so" in n.rsplit("/", 1)[-1])
    dist_info = next(n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info"))
    record = f"{dist_info}/RECORD"
    added: dict[str, bytes] = {}
    for lib in libs:
        name = original_name(lib.rsplit("/", 1)[-1])
        package = package_of(system_file(name))
        text = (f"{lib.rsplit('/', 1)[-1]} is {name} from the Debian package {package}.\n"
                f"Its copyright and license (/usr/share/doc/{package}/copyright):\n\n"
                + license_text(package))
        added[f"{dist_info}/licenses/{name.split('.so')[0]}.txt"] = text.encode()
    lines = [line for line in entries[record].decode().splitlines()
             if line and line.split(",", 1)[0] not in added and not line.startswith(record)]
    lines += [_record_line(n, d) for n, d in sorted(added.items())]
    lines.append(f"{record},,")
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(wheel)), suffix=".whl")
    os.close(fd)
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        for n in names:
            if n != record and n not in added:
                out.writestr(infos[n], entries[n])
        for n, d in sorted(added.items()):
            out.writestr(n, d)
        out.writestr(record, "\n".join(lines) + "\n")
    os.replace(tmp, wheel)
    return sorted(added)


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python packaging/wheel_licenses.py WHEEL...", file=sys.stderr)
        return 2
    for wheel in argv:
        for name in add_licenses(wheel):
            print(f"{os.path.basename(wheel)}: added {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
