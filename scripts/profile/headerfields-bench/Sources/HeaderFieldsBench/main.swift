import Glibc
import HTTP1
import HTTPCore

// One request head as the benchmark's load generator and a browser would send it.
let head = Array(
    ("POST /upload?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n"
        + "Accept: */*\r\nAccept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\n"
        + "Content-Type: multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW\r\n"
        + "Content-Length: 4321\r\nX-Request-Id: 0123456789abcdef\r\n\r\n").utf8)
let parsed = try! HeadParser.parseRequest(head)

func nanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// The median of 7 runs of `iterations` calls, in nanoseconds per call.
func time(_ name: String, iterations: Int = 200_000, _ body: () -> Int) {
    var samples: [Double] = []
    var sink = 0
    for _ in 0..<7 {
        let start = nanoseconds()
        for _ in 0..<iterations { sink &+= body() }
        samples.append(Double(nanoseconds() - start) / Double(iterations))
    }
    samples.sort()
    let tenths = Int((samples[3] * 10).rounded())
    let figure = "\(tenths / 10).\(tenths % 10) ns"
    print(name + String(repeating: " ", count: max(1, 46 - name.count)) + figure + (sink == 42 ? "." : ""))
}

time("parse a request head (9 fields)") { (try? HeadParser.parseRequest(head))?.headers.count ?? 0 }
time("4 lookups: first, count(of:), contains, [ ]") {
    let headers = parsed.headers
    return (headers.first("Content-Type")?.count ?? 0) + headers.count(of: "Content-Length")
        + (headers.contains("Transfer-Encoding") ? 1 : 0) + (headers["Host"]?.utf8.count ?? 0)
}
time("iterate with for-in (Field)") {
    var total = 0
    for field in parsed.headers { total += field.name.count + field.value.count }
    return total
}
time("copy, remove hop-by-hop, set 2, serialize") {
    var headers = parsed.headers
    headers.removeHopByHop()
    headers.set(name: "X-Forwarded-For", value: "127.0.0.1")
    headers.set(name: "X-Forwarded-Proto", value: "http")
    var out: [UInt8] = []
    headers.appendSerialized(to: &out)
    return out.count
}
time("keepAlive + framing decision") {
    (parsed.keepAlive ? 1 : 0) + ((try? MessageFraming.request(parsed)) == .length(4321) ? 1 : 0)
}
#if BORROWED_API
    time("iterate with forEachField (borrowed)") {
        var total = 0
        parsed.headers.forEachField { name, value in total += name.count + value.count }
        return total
    }
    time("4 lookups, firstValue instead of first") {
        let headers = parsed.headers
        return (headers.firstValue("Content-Type")?.count ?? 0) + headers.count(of: "Content-Length")
            + (headers.contains("Transfer-Encoding") ? 1 : 0) + (headers["Host"]?.utf8.count ?? 0)
    }
#endif
