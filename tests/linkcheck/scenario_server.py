#!/usr/bin/python3
"""The link checker's test HTTPS server: one scenario per finding, on one port.

Makes a test CA and its certificates (python3-cryptography), writes ca.pem into --dir, listens
on --address (127.0.0.x) at a port the kernel picks and writes it to DIR/port once ready. The
certificate depends on the name the client asks for (SNI): shop.test and friends get a valid
one, mismatch.shop.test one for another name, expired.shop.test an expired one. Every request is
appended to DIR/requests.log as "<monotonic seconds> <host> <path> <user agent>".
/flip/NAME answers 404 while the file DIR/broken-NAME exists, and as /clean otherwise.
"""

import argparse
import datetime
import http.server
import os
import socketserver
import ssl
import sys
import threading
import time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

GOOD_NAMES = ["shop.test", "www.shop.test", "other.test"]
BIG_BODY = 50 * 1024 * 1024


def only_ref(query):
    return "&".join(p for p in query.split("&") if p.startswith("ref="))


def name(common):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def certificate(subject, key, issuer, issuer_key, names, not_before, not_after, ca=False):
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if names:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def write_pem(path, cert, key=None):
    with open(path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
        if key is not None:
            f.write(key.private_bytes(serialization.Encoding.PEM,
                                      serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))


def make_contexts(directory):
    now = datetime.datetime.now(datetime.timezone.utc)
    day = datetime.timedelta(days=1)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = certificate(name("refgate test CA"), ca_key, name("refgate test CA"), ca_key, [],
                     now - day, now + 30 * day, ca=True)
    write_pem(os.path.join(directory, "ca.pem"), ca)
    contexts = {}
    for label, names, start, end in [("good", GOOD_NAMES, now - day, now + 30 * day),
                                     ("mismatch", ["wrong.test"], now - day, now + 30 * day),
                                     ("expired", ["expired.shop.test"], now - 30 * day, now - day)]:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = certificate(name(names[0]), key, ca.subject, ca_key, names, start, end)
        path = os.path.join(directory, label + ".pem")
        write_pem(path, cert, key)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(path)
        contexts[label] = context
    return contexts


PAGE = b"<!doctype html><title>%s</title><p>A product page.</p>"
OUT_OF_STOCK = (b'<!doctype html><script type="application/ld+json">{"@context": '
                b'"https://schema.org", "@type": "Product", "name": "Widget", "offers": '
                b'{"@type": "Offer", "availability": "https://schema.org/OutOfStock"}}</script>')


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        host = self.headers.get("Host", "").split(":")[0]
        line = "%.3f %s %s %s\n" % (time.monotonic(), host, self.path,
                                    self.headers.get("User-Agent", "-"))
        with self.server.log_lock, open(self.server.log_path, "a") as f:
            f.write(line)
        return host

    def redirect(self, target):
        if target.startswith("/"):
            target = "https://%s:%d%s" % (self.headers["Host"].split(":")[0],
                                          self.server.server_address[1], target)
        self.send_response(302)
        self.send_header("Location", target)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def page(self, status=200, body=None):
        body = body if body is not None else PAGE % self.path.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def big(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(BIG_BODY))
        self.end_headers()
        chunk = b"x" * 65536
        try:
            for _ in range(BIG_BODY // len(chunk)):
                self.wfile.write(chunk)
        except OSError:
            pass  # the checker stopped reading at its cap

    def do_GET(self):
        self.record()
        path, _, query = self.path.partition("?")
        port = self.server.server_address[1]
        routes = {
            "/clean": lambda: self.redirect("https://www.shop.test:%d/p/clean?%s" % (port, query)),
            "/drop": lambda: self.redirect("/p/drop"),
            "/swap": lambda: self.redirect("/p/swap?ref=someone-else"),
            # Keeps the referral parameter only: a sub-ID parameter is lost on the way.
            "/keepref": lambda: self.redirect("/p/keepref?" + only_ref(query)),
            "/home": lambda: self.redirect("/"),
            "/moved": lambda: self.redirect("https://other.test:%d/p/moved?%s" % (port, query)),
            "/gone": lambda: self.page(404),
            "/fail": lambda: self.page(500),
            "/loop/a": lambda: self.redirect("/loop/b?" + query),
            "/loop/b": lambda: self.redirect("/loop/a?" + query),
            "/private": lambda: self.redirect("https://127.0.0.1:%d/admin" % port),
            "/metadata": lambda: self.redirect("http://169.254.169.254/latest/meta-data/"),
            "/oos": lambda: self.page(200, OUT_OF_STOCK),
            "/slow": lambda: (time.sleep(3), self.page(200)),
            "/hang": lambda: (time.sleep(30), self.page(200)),
            "/big": self.big,
        }
        if path.startswith("/flip/"):
            broken = os.path.join(self.server.dir, "broken-" + os.path.basename(path))
            if os.path.exists(broken):
                return self.page(404)
            return routes["/clean"]()
        routes.get(path, lambda: self.page(200))()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--address", default="127.0.0.2")
    args = parser.parse_args()
    contexts = make_contexts(args.dir)

    def choose(sock, server_name, _context):
        if server_name == "mismatch.shop.test":
            sock.context = contexts["mismatch"]
        elif server_name == "expired.shop.test":
            sock.context = contexts["expired"]

    contexts["good"].sni_callback = choose
    server = Server((args.address, 0), Handler)
    server.log_path = os.path.join(args.dir, "requests.log")
    server.dir = args.dir
    server.log_lock = threading.Lock()
    server.socket = contexts["good"].wrap_socket(server.socket, server_side=True)
    with open(os.path.join(args.dir, "port.tmp"), "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(os.path.join(args.dir, "port.tmp"), os.path.join(args.dir, "port"))
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
