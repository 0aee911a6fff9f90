"""The listing side of the loopback S3 endpoints of the listing tests: a request handler that
records each listing request, answers 503 SlowDown to those its ``fails`` picks, and sends
pages of ``ListObjectsV2`` answers (keys and, for entries ending in ``/``, common prefixes)."""
from __future__ import annotations

import http.server
from urllib.parse import parse_qs, urlparse

from loopback import not_found

SLOWDOWN = b"<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>"


class ListingEndpoint(http.server.BaseHTTPRequestHandler):
    """A base for the tests' S3 endpoints (bucket ``bkt``): ``page`` entries a page;
    ``fails(n)`` picks the listing requests (by number, from 1) answered 503 SlowDown;
    ``asked`` records each listing request's query (set it to a new list in a fixture)."""

    protocol_version = "HTTP/1.1"
    page = 1000
    asked: list = []
    fails = staticmethod(lambda n: False)

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def send_xml(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def listing(self) -> tuple[dict, int] | None:
        """The query of this listing request and its number (from 1); None when it has been
        answered already: 404 for a request that is no listing, 503 for one ``fails`` picks."""
        query = parse_qs(urlparse(self.path).query)
        if "list-type" not in query:
            not_found(self)
            return None
        cls = type(self)
        cls.asked.append(query)
        n = len(cls.asked)
        if cls.fails(n):
            self.send_xml(503, SLOWDOWN)
            return None
        return query, n

    def send_page(self, prefix: str, entries: list[str], more: bool, token: str,
                  key: str = "<Key>{}</Key>") -> None:
        """A page naming ``entries`` (those ending in ``/`` as common prefixes), truncated
        with ``token`` as its continuation token when ``more``; ``key`` formats each key's
        element (``""``: entries without their Key)."""
        items = "".join(f"<Contents>{key.format(k)}<LastModified>2024-01-01T00:00:00.000Z"
                        f"</LastModified><ETag>\"e\"</ETag><Size>3</Size></Contents>"
                        for k in entries if not k.endswith("/"))
        items += "".join(f"<CommonPrefixes><Prefix>{e}</Prefix></CommonPrefixes>"
                         for e in entries if e.endswith("/"))
        self.send_xml(200, (
            '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns='
            '"http://s3.amazonaws.com/doc/2006-03-01/"><Name>bkt</Name>'
            f"<Prefix>{prefix}</Prefix><KeyCount>{len(entries)}</KeyCount>"
            f"<MaxKeys>{type(self).page}</MaxKeys><IsTruncated>{'true' if more else 'false'}"
            f"</IsTruncated>{items}"
            + (f"<NextContinuationToken>{token}</NextContinuationToken>" if more else "")
            + "</ListBucketResult>").encode())
