#!/usr/bin/python3
"""The webhook tests' HTTPS receiver, with a test CA of its own.

Makes a CA and a certificate for hooks.test (python3-cryptography), writes ca.pem into --dir,
listens on --address (127.0.0.x) at a port the kernel picks and writes it to DIR/port once ready.
Every POST is appended to DIR/requests.jsonl as it arrives, one JSON object a line: "path",
"headers" (names in lower case) and "body". The path says how to answer:
  /ok     200
  /fail   500
  /flaky  500 the first time a webhook-id comes, 200 after
  /hold   200 after 3 seconds
"""

import argparse
import datetime
import http.server
import json
import os
import socketserver
import ssl
import threading
import time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def name(common):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_context(directory):
    now = datetime.datetime.now(datetime.timezone.utc)
    day = datetime.timedelta(days=1)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("refgate webhook test CA"))
          .issuer_name(name("refgate webhook test CA")).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - day)
          .not_valid_after(now + 30 * day)
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(name("hooks.test")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - day).not_valid_after(now + 30 * day)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("hooks.test")]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    with open(os.path.join(directory, "ca.pem"), "wb") as f:
        f.write(ca.public_bytes(serialization.Encoding.PEM))
    server_pem = os.path.join(directory, "server.pem")
    with open(server_pem, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(server_pem)
    return context


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status):
        body = b"ok" if status == 200 else b"no"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode("utf-8")
        headers = {k.lower(): v for k, v in self.headers.items()}
        entry = {"path": self.path, "headers": headers, "body": body}
        with self.server.lock:
            with open(self.server.log_path, "a") as f:
                f.write(json.dumps(entry) + "\n")
            seen = self.server.seen
            first = headers.get("webhook-id") not in seen
            seen.add(headers.get("webhook-id"))
        if self.path == "/ok":
            self.answer(200)
        elif self.path == "/flaky":
            self.answer(500 if first else 200)
        elif self.path == "/hold":
            time.sleep(3)
            self.answer(200)
        else:
            self.answer(500)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--address", default="127.0.0.2")
    args = parser.parse_args()
    context = make_context(args.dir)
    server = Server((args.address, 0), Handler)
    server.log_path = os.path.join(args.dir, "requests.jsonl")
    server.lock = threading.Lock()
    server.seen = set()
    server.socket = context.wrap_socket(server.socket, server_side=True)
    port_file = os.path.join(args.dir, "port")
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
