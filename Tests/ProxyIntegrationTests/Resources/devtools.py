#!/usr/bin/env python3
"""Drives headless Chromium over the DevTools protocol (stdlib only, Python 3.11).

Usage: devtools.py [SCRIPT_JSON]  (the script is read from standard input without one)

The script is a JSON object:
  {"url": "http://127.0.0.1:PORT/...",        # navigated to first (optional)
   "steps": [
     {"wait": "JS expression", "timeout_ms": 20000},   # polled every 100 ms until truthy
     {"eval": "JS expression returning JSON-able"},     # its value is appended to "evals"
     {"screenshot": "/path.png", "selector": "CSS"},    # PNG of the viewport (or of the element)
     {"navigate": "http://..."},                        # another page load
     {"sleep_ms": 500},
     {"signal": "/path"}],                              # creates the file: the test may act now
   "window": [1280, 900],                     # the viewport (default 1280 x 900)
   "init_script": "JS",                       # runs in every new document before its scripts
   "extra_headers": {"Name": "value"},        # sent with every request the page makes
   "chromium": "/usr/bin/chromium",           # default: `chromium` on PATH
   "timeout_ms": 120000}                      # the whole run

It prints one JSON object on standard output and exits 0 when "ok" is true, 1 otherwise:
  {"ok": bool, "evals": [...], "requests": [every request URL, the documents included],
   "responses": [{"url", "status", "headers"}] (as their heads arrived),
   "console": ["level: text", ...] (console calls, exceptions, browser log entries such as
   Content-Security-Policy refusals), "screenshots": [{"path", "width", "height",
   "colours"}], "error": str or null}

An eval that throws fails the run. A failed wait reports its last value and the start of the
DOM. Chromium runs with a fresh temporary profile, in its own process group, which is killed
(and the profile removed) at the end whatever happened.
"""

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zlib

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
    "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--metrics-recording-only", "--disable-default-apps", "--mute-audio",
    "--remote-debugging-pipe",
]


class Failure(Exception):
    pass


class Browser:
    """One Chromium process and its DevTools pipe (commands on its fd 3, messages from its fd 4)."""

    def __init__(self, executable, width, height):
        self.profile = tempfile.mkdtemp(prefix="formgate-devtools-")
        self.log = open(os.path.join(self.profile, "chromium.log"), "w+b")
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()
        # Above 10 first, so that moving them onto 3 and 4 cannot overwrite one with the other.
        high_read = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD, 10)
        high_write = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD, 10)

        def onto_3_and_4():
            os.dup2(high_read, 3)
            os.dup2(high_write, 4)

        arguments = [executable] + FLAGS + [
            f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"]
        try:
            self.process = subprocess.Popen(
                arguments, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                preexec_fn=onto_3_and_4, pass_fds=(3, 4), start_new_session=True)
        except OSError:
            for fd in (self.to_browser, self.from_browser):
                os.close(fd)
            self.log.close()
            shutil.rmtree(self.profile, ignore_errors=True)
            raise
        finally:
            for fd in (to_browser_read, from_browser_write, high_read, high_write):
                os.close(fd)
        self.pending = b""
        self.next_id = 0
        self.handlers = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self.to_browser, data):]
        return self.next_id

    def call(self, method, params=None, session=None, timeout=30.0):
        """Sends a command and returns its result, handling events that arrive meanwhile."""
        wanted = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            message = self.receive(deadline)
            if message is None:
                raise Failure(f"{method}: no answer within {timeout} s")
            if message.get("id") == wanted:
                if "error" in message:
                    raise Failure(f"{method}: {message['error']}")
                return message.get("result", {})

    def pump(self, until):
        """Handles events until the monotonic time `until`."""
        while self.receive(until) is not None:
            pass

    def receive(self, deadline):
        """The next message (events are also given to the handlers), or None at the deadline."""
        while b"\0" not in self.pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            readable, _, _ = select.select([self.from_browser], [], [], remaining)
            if not readable:
                return None
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise Failure("chromium closed its DevTools pipe: " + self.log_tail())
            self.pending += chunk
        raw, self.pending = self.pending.split(b"\0", 1)
        message = json.loads(raw)
        if "method" in message:
            for handler in self.handlers:
                handler(message)
        return message

    def log_tail(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-2000:]

    def close(self):
        try:
            self.send("Browser.close")
            self.process.wait(timeout=3)
        except (OSError, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        for fd in (self.to_browser, self.from_browser):
            os.close(fd)
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


def describe(value):
    """A remote object (a console argument) as text."""
    if "value" in value:
        return value["value"] if isinstance(value["value"], str) else json.dumps(value["value"])
    return value.get("description", value.get("type", "?"))


class Page:
    """One page target attached in flat mode; records requests and console output."""

    def __init__(self, browser, result, width, height, init_script, extra_headers):
        self.browser = browser
        self.result = result
        self.loaded = False
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.call(
            "Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        browser.handlers.append(self.event)
        for domain in ("Network", "Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        if init_script:
            self.call("Page.addScriptToEvaluateOnNewDocument", {"source": init_script})
        if extra_headers:
            self.call("Network.setExtraHTTPHeaders", {"headers": extra_headers})

    def call(self, method, params=None, timeout=30.0):
        return self.browser.call(method, params, self.session, timeout)

    def event(self, message):
        if message.get("sessionId") != self.session:
            return
        method, params = message["method"], message.get("params", {})
        if method == "Network.requestWillBeSent":
            self.result["requests"].append(params["request"]["url"])
        elif method == "Network.responseReceived":
            response = params["response"]
            self.result["responses"].append(
                {"url": response["url"], "status": response["status"], "headers": response.get("headers", {})})
        elif method == "Page.loadEventFired":
            self.loaded = True
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(describe(argument) for argument in params.get("args", []))
            self.result["console"].append(f"{params.get('type')}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text", "")
            self.result["console"].append(f"exception: {text}")
        elif method == "Log.entryAdded":
            entry = params["entry"]
            self.result["console"].append(
                f"{entry.get('level')}: [{entry.get('source')}] {entry.get('text')} {entry.get('url', '')}"
                .rstrip())

    def navigate(self, url, deadline):
        self.loaded = False
        answer = self.call("Page.navigate", {"url": url})
        if answer.get("errorText"):
            raise Failure(f"navigating to {url}: {answer['errorText']}")
        while not self.loaded:
            if time.monotonic() > deadline or self.browser.receive(deadline) is None:
                raise Failure(f"{url} did not finish loading")

    def evaluate(self, expression):
        """The expression's value (promises awaited); raises when it throws."""
        answer = self.call("Runtime.evaluate", {
            "expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise Failure(f"{expression!r} threw: {text}")
        return answer["result"].get("value")

    def wait(self, expression, timeout):
        deadline = time.monotonic() + timeout
        while True:
            # Truthiness is JavaScript's (an element is truthy; its JSON value `{}` is not in Python).
            truthy, value = self.evaluate(f"((value) => [!!value, value])((\n{expression}\n))")
            if truthy:
                return
            if time.monotonic() > deadline:
                excerpt = self.evaluate(
                    "document.documentElement ? document.documentElement.outerHTML.slice(0, 3000) : ''")
                raise Failure(
                    f"waited {timeout} s for {expression!r}; last value {json.dumps(value)}; "
                    f"DOM: {excerpt}")
            self.browser.pump(time.monotonic() + 0.1)

    def screenshot(self, path, selector):
        params = {"format": "png"}
        if selector:
            box = self.evaluate(
                f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
                " const r = e.getBoundingClientRect();"
                " return {x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height}; })()")
            if not box or box["width"] < 1 or box["height"] < 1:
                raise Failure(f"screenshot: nothing visible matches {selector!r}")
            params["clip"] = dict(box, scale=1)
            params["captureBeyondViewport"] = True
        data = base64.b64decode(self.call("Page.captureScreenshot", params)["data"])
        with open(path, "wb") as file:
            file.write(data)
        width, height, colours = png_colours(data)
        self.result["screenshots"].append(
            {"path": path, "width": width, "height": height, "colours": colours})


def png_colours(data):
    """Width, height and the number of distinct pixel colours of an 8-bit RGB(A) PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise Failure("the screenshot is not a PNG")
    position, header, compressed = 8, None, b""
    while position < len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind = data[position + 4:position + 8]
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            compressed += body
        position += 12 + length
    width, height = int.from_bytes(header[0:4], "big"), int.from_bytes(header[4:8], "big")
    depth, colour_type, interlace = header[8], header[9], header[12]
    if depth != 8 or colour_type not in (2, 6) or interlace != 0:
        raise Failure(f"unexpected PNG layout: depth {depth}, colour type {colour_type}")
    pixel = 3 if colour_type == 2 else 4
    stride = width * pixel
    raw = zlib.decompress(compressed)
    previous = bytearray(stride)
    colours = set()
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        unfilter(kind, line, previous, pixel)
        colours.update(bytes(line[i:i + pixel]) for i in range(0, stride, pixel))
        previous = line
    return width, height, len(colours)


def unfilter(kind, line, previous, pixel):
    """Undoes one scanline's PNG filter in place (RFC 2083 §6)."""
    if kind == 0:
        return
    if kind == 2:
        for i in range(len(line)):
            line[i] = (line[i] + previous[i]) & 0xFF
        return
    for i in range(len(line)):
        left = line[i - pixel] if i >= pixel else 0
        up = previous[i]
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
        elif kind == 4:
            corner = previous[i - pixel] if i >= pixel else 0
            estimate = left + up - corner
            distances = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
            if distances[0] <= distances[1] and distances[0] <= distances[2]:
                predictor = left
            elif distances[1] <= distances[2]:
                predictor = up
            else:
                predictor = corner
            line[i] = (line[i] + predictor) & 0xFF
        else:
            raise Failure(f"unknown PNG filter {kind}")


def run(script, result):
    width, height = script.get("window", [1280, 900])
    deadline = time.monotonic() + script.get("timeout_ms", 120000) / 1000
    executable = script.get("chromium") or shutil.which("chromium")
    if not executable:
        raise Failure("chromium is not installed")
    browser = Browser(executable, width, height)
    try:
        page = Page(browser, result, width, height, script.get("init_script"), script.get("extra_headers"))
        steps = list(script.get("steps", []))
        if script.get("url"):
            steps.insert(0, {"navigate": script["url"]})
        for step in steps:
            if time.monotonic() > deadline:
                raise Failure(f"the run took longer than its timeout_ms; at {json.dumps(step)}")
            if "navigate" in step:
                page.navigate(step["navigate"], min(deadline, time.monotonic() + 30))
            elif "wait" in step:
                page.wait(step["wait"], step.get("timeout_ms", 20000) / 1000)
            elif "eval" in step:
                result["evals"].append(page.evaluate(step["eval"]))
            elif "screenshot" in step:
                page.screenshot(step["screenshot"], step.get("selector"))
            elif "sleep_ms" in step:
                browser.pump(time.monotonic() + step["sleep_ms"] / 1000)
            elif "signal" in step:
                with open(step["signal"], "w", encoding="utf-8"):
                    pass
            else:
                raise Failure(f"unknown step {json.dumps(step)}")
        browser.pump(time.monotonic() + 0.05)  # the last events (console lines) in flight
    finally:
        browser.close()


def main():
    # A SIGTERM unwinds like an error, so the browser is still killed and its profile removed.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    text = sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read()
    result = {"ok": False, "evals": [], "requests": [], "responses": [], "console": [], "screenshots": [],
              "error": None}
    try:
        run(json.loads(text), result)
        result["ok"] = True
    except Failure as failure:
        result["error"] = str(failure)
    except Exception as error:  # noqa: BLE001 - reported in the JSON, never a traceback alone
        result["error"] = f"{type(error).__name__}: {error}"
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
