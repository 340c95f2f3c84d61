"""A bounded load of browser-like clicks: a few threads, each on one keep-alive connection,
at a fixed total rate, spread over a set of links. Counts per link the 302s each client saw and
records every failure (connection error or a status other than 302) with its time."""

import http.client
import threading
import time

# A current desktop Chrome's navigation: refgate's classifier counts these as human clicks.
BROWSER_HEADERS = {
    "User-Agent": ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                   "Chrome/131.0.0.0 Safari/537.36"),
    "Accept": ("text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,"
               "*/*;q=0.8"),
    "Accept-Language": "en-US,en;q=0.9",
    "Accept-Encoding": "gzip, deflate, br",
    "Sec-Fetch-Mode": "navigate",
    "Sec-Fetch-Dest": "document",
    "Sec-Fetch-Site": "cross-site",
    "Sec-Fetch-User": "?1",
    "Upgrade-Insecure-Requests": "1",
}


class Failure:
    def __init__(self, at, link, what):
        self.at, self.link, self.what = at, link, what


class Load:
    """Runs until stop() or its limits (max_seconds, max_clicks); start() returns at once."""

    def __init__(self, host, port, links, rate, threads, max_seconds, clock):
        self.host, self.port, self.links = host, port, list(links)
        self.rate, self.threads = rate, threads
        self.max_seconds = max_seconds
        self.max_clicks = int(rate * max_seconds * 1.1) + 100
        self.clock = clock  # seconds since the matrix started, for failure times
        # 302s per client connection and link; `sent` sums them per link.
        self.sent_by_client = [{link: 0 for link in self.links} for _ in range(threads)]
        self.failures = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.workers = []

    def start(self):
        for i in range(self.threads):
            t = threading.Thread(target=self._run, args=(i,), daemon=True)
            t.start()
            self.workers.append(t)

    def stop(self):
        self.stopping.set()
        for t in self.workers:
            t.join(15)

    @property
    def sent(self):
        with self.lock:
            return {link: sum(c[link] for c in self.sent_by_client) for link in self.links}

    def total_sent(self):
        return sum(self.sent.values())

    def _connect(self):
        return http.client.HTTPConnection(self.host, self.port, timeout=10)

    def _run(self, worker):
        interval = self.threads / self.rate
        began = time.monotonic()
        conn = self._connect()
        n = 0
        per_thread_cap = self.max_clicks // self.threads
        while not self.stopping.is_set() and n < per_thread_cap:
            due = began + n * interval
            now = time.monotonic()
            if now - began > self.max_seconds:
                break
            if due > now:
                time.sleep(due - now)
            link = self.links[(n * self.threads + worker) % len(self.links)]
            n += 1
            conn = self._click(conn, link, self.sent_by_client[worker])
        conn.close()

    def _click(self, conn, link, sent):
        try:
            conn.request("GET", f"/go/{link}", headers=BROWSER_HEADERS)
            response = conn.getresponse()
            response.read()
            status = response.status
            reusable = not response.will_close
        except (OSError, http.client.HTTPException) as e:
            self._fail(link, type(e).__name__)
            conn.close()
            return self._connect()
        if status == 302:
            with self.lock:
                sent[link] += 1
        else:
            self._fail(link, f"HTTP {status}")
        if not reusable:
            conn.close()
            return self._connect()
        return conn

    def _fail(self, link, what):
        with self.lock:
            self.failures.append(Failure(self.clock(), link, what))
