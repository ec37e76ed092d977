// multipart-bench: MB/s of parse + re-encode against a plain memmem scan of the same bytes.
//
// Usage: multipart-bench [--repeat N] [--chunk BYTES] [--markdown] [--case a|b|c|e]
// Every case is fed in chunks of --chunk bytes (64 KiB by default, a typical socket read),
// and re-encoded under a new boundary into a sink that takes bytes as the proxy's upstream
// output does (`ProxySink`: file content moved as the input's chains, the rest copied as
// evbuffer_add copies it). The memmem column scans the same chunks for the same delimiter; the ratio is
// parse+encode MB/s divided by memmem MB/s, measured in the same run. Medians of --repeat runs.
// Case (d) is case (a) through a route's rules with a sha256 digest, hashed on a pool thread
// as the proxy hashes a large file; its reference is SHA-256 alone over the same chunks.
// Case (e) is 10,000 small parts (fields and JPEG-signed files in turn) through a route's rules
// (sniff, rename, a `{uuid}{ext}` file name, an injection, sha256 hashed inline): the rules'
// per-part cost and allocations.
//
// Allocations per part: run under scripts/profile/alloccount.c (LD_PRELOAD, with
// ALLOCCOUNT_FILE naming its counters file) and each case also prints the heap allocations one
// parse + re-encode made, divided by the parts in the body (after one warm-up run, so the
// figure is the steady state, not the first part's buffers).

import CByteSearch
import CCrypto
import EventLoop
import Foundation
import HTTPCore
import MultipartEncoding
import MultipartParsing
import UploadRules

#if canImport(Glibc)
    import Glibc
#endif

var repeats = 7
var chunkSize = 64 * 1024
var markdown = false
var only: String?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--repeat": repeats = Int(arguments.next() ?? "") ?? repeats
    case "--chunk": chunkSize = Int(arguments.next() ?? "") ?? chunkSize
    case "--markdown": markdown = true
    case "--case": only = arguments.next()
    default:
        print("usage: multipart-bench [--repeat N] [--chunk BYTES] [--markdown] [--case a|b|c|e]")
        exit(2)
    }
}

/// Where the re-encoded body goes, as the proxy's upstream output takes it: bytes that lie in
/// the chunk being parsed and are at least `InputLoan.minimumMove` long move there as the
/// input's chains (counted, not copied: the proxy's `InputLoan`); everything else (part heads,
/// delimiters, injected fields, short pieces) is copied into a reusable 1 MiB ring, as
/// `evbuffer_add` copies it.
struct ProxySink: ByteSink {
    let ring = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
    var position = 0
    var total = 0
    /// The chunk being fed to the parser.
    var chunk = UnsafeRawBufferPointer(start: nil, count: 0)

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        total += bytes.count
        if bytes.count >= InputLoan.minimumMove, let start = bytes.baseAddress,
            let chunkStart = chunk.baseAddress,
            start >= chunkStart, start + bytes.count <= chunkStart + chunk.count
        {
            return
        }
        var remaining = bytes
        while !remaining.isEmpty {
            let count = min(remaining.count, ring.count - position)
            (ring.baseAddress! + position).copyMemory(from: remaining.baseAddress!, byteCount: count)
            position = (position + count) % ring.count
            remaining = UnsafeRawBufferPointer(rebasing: remaining[count...])
        }
    }
}

/// Re-encodes parser events under a new boundary.
struct Reencoder: MultipartEventHandler {
    var encoder = MultipartEncoder()
    var sink = ProxySink()

    mutating func handle(_ event: consuming MultipartEvent) {
        switch consume event {
        case .partBegin(let head):
            var headers = HeaderFields()
            if let type = head.headers.first("Content-Type") {
                headers.append(HeaderFields.Field(name: Array("Content-Type".utf8), value: type))
            }
            try! encoder.beginPart(head.disposition, headers: headers, into: &sink)
        case .body(let bytes):
            encoder.writeBody(bytes, into: &sink)
        case .partEnd:
            break
        case .end:
            try! encoder.finish(into: &sink)
        }
    }
}

struct Case {
    var name: String
    var body: [UInt8]
}

let boundary = Array("----WebKitFormBoundary7MA4YWxkTrZu0gW".utf8)

func header(_ name: String, filename: String? = nil) -> [UInt8] {
    var text =
        "--\(String(decoding: boundary, as: UTF8.self))\r\nContent-Disposition: form-data; name=\"\(name)\""
    if let filename { text += "; filename=\"\(filename)\"\r\nContent-Type: application/octet-stream" }
    return Array((text + "\r\n\r\n").utf8)
}

let closing = Array("\r\n--\(String(decoding: boundary, as: UTF8.self))--\r\n".utf8)

func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes { raw in
        let words = raw.bindMemory(to: UInt64.self)
        for index in words.indices {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            words[index] = z ^ (z >> 31)
        }
    }
    return bytes
}

func largeFile() -> Case {
    Case(
        name: "(a) one 64 MiB file part",
        body: header("file", filename: "big.bin") + randomBytes(64 << 20, seed: 1) + closing)
}

func smallFields() -> Case {
    var body: [UInt8] = []
    for index in 0..<10_000 {
        if index > 0 { body += Array("\r\n".utf8) }
        body += header("field\(index)") + Array("value of field \(index)".utf8)
    }
    return Case(name: "(b) 10,000 small fields", body: body + closing)
}

/// 10,000 small parts, fields and files in turn, for the rules' per-part cost (case (e)).
func mixedParts() -> Case {
    var body: [UInt8] = []
    // A JPEG's first bytes, so sniffing reads the signature table, as for most real files.
    let content: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + randomBytes(64, seed: 3)
    for index in 0..<10_000 {
        if index > 0 { body += Array("\r\n".utf8) }
        if index % 2 == 0 {
            body += header("field\(index)") + Array("value of field \(index)".utf8)
        } else {
            body += header("file\(index)", filename: "photo \(index).jpg") + content
        }
    }
    return Case(name: "(e) 10,000 small fields and files through rules", body: body + closing)
}

/// Case (e)'s rules: every file renamed by a template, sniffed and hashed; fields renamed and
/// one injected; the per-part work of a rules route without a large file.
func perPartRules() -> RuleSet {
    var rules = RuleSet()
    rules.sniff = RuleSet.SniffRule(bytes: 4096, policy: .override)
    rules.renameFields = ["field0": "first", "file1": "upload"]
    rules.filename = try! Template("{uuid}{ext}")
    rules.inject = [
        Injection(name: "key", position: .before("upload"), value: .template(try! Template("{filename}")))
    ]
    rules.digests = [.sha256]
    return rules
}

func denseContent() -> Case {
    let alphabet = Array("\r\n-".utf8) + [UInt8(ascii: "a")]
    let prefix = Array("\r\n--".utf8) + boundary
    var content: [UInt8] = []
    content.reserveCapacity(16 << 20)
    let noise = randomBytes(16 << 20, seed: 2)
    var index = 0
    while content.count < 16 << 20 {
        let choice = Int(noise[index % noise.count])
        if choice < 16 {
            content += prefix[..<(1 + Int(noise[(index + 1) % noise.count]) % (prefix.count - 1))]
        } else {
            content.append(alphabet[choice & 3])
        }
        index += 1
    }
    return Case(
        name: "(c) 16 MiB dense in CR/LF/-", body: header("file", filename: "dense.bin") + content + closing)
}

func seconds(_ body: () -> Void) -> Double {
    var start = timespec()
    var end = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    body()
    clock_gettime(CLOCK_MONOTONIC, &end)
    return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
}

func parseAndEncode(_ body: [UInt8], chunkSize: Int) -> Int {
    var handler = Reencoder()
    var parser = try! MultipartParser(boundary: boundary, limits: MultipartLimits(parts: 20_000))
    body.withUnsafeBytes { all in
        var start = 0
        while start < all.count {
            let end = min(all.count, start + chunkSize)
            let chunk = UnsafeRawBufferPointer(rebasing: all[start..<end])
            handler.sink.chunk = chunk
            try! parser.feed(chunk, into: &handler)
            start = end
        }
    }
    try! parser.finish(into: &handler)
    handler.sink.ring.deallocate()
    return handler.sink.total
}

/// The same, through a route's rules: sniff + rename + filename + inject (a Qiniu token) +
/// sha256 digest. The file is hashed as the proxy hashes it: past 1 MiB on a `DigestPool`
/// thread (`hashing`), the feed pausing while the queue is backed up and the pipeline
/// released when the digest is ready; without `hashing`, inline.
func parseWithRules(
    _ body: [UInt8], chunkSize: Int, rules: RuleSet, sniffer: Sniffer, hashing: HashingThread?
) -> Int {
    var pipeline = RulePipeline(
        rules: rules, sink: ProxySink(), headers: HeaderFields(), now: 1_700_000_000, sniffer: sniffer,
        hashing: hashing?.queue)
    var parser = try! MultipartParser(boundary: boundary, limits: MultipartLimits(parts: 20_000))
    body.withUnsafeBytes { all in
        var start = 0
        while start < all.count {
            let end = min(all.count, start + chunkSize)
            let chunk = UnsafeRawBufferPointer(rebasing: all[start..<end])
            pipeline.sink.chunk = chunk
            try! parser.feed(chunk, into: &pipeline)
            while pipeline.wantsPause, let hashing {
                hashing.progress.wait()
                _ = pipeline.resume()
            }
            start = end
        }
    }
    try! parser.finish(into: &pipeline)
    while pipeline.isHolding, let hashing {
        hashing.progress.wait()
        _ = pipeline.resume()
    }
    precondition(pipeline.refusal == nil && !pipeline.isHolding, "rules refused the benchmark body")
    pipeline.sink.ring.deallocate()
    return pipeline.sink.total
}

/// One hashing thread and its queue, as a worker has them; `progress` is the queue's signal.
final class HashingThread: @unchecked Sendable {
    let progress = DispatchSemaphore(value: 0)
    let pool: DigestPool
    let queue: DigestQueue

    init() {
        pool = DigestPool(threads: 1) { (_: String, body: @escaping @Sendable () -> Void) in
            Thread { body() }.start()
        }
        let progress = progress
        queue = DigestQueue(pool: pool) { progress.signal() }
    }
}

func benchmarkRules() -> RuleSet {
    var rules = RuleSet()
    rules.sniff = RuleSet.SniffRule(bytes: 4096, policy: .override)
    rules.renameFields = ["file": "upload"]
    rules.filename = try! Template("{uuid}{ext}")
    rules.inject = [
        Injection(
            name: "token", position: .before("upload"),
            value: .provider(
                QiniuProvider(
                    fieldName: "token",
                    policy:
                        QiniuPolicy(
                            accessKey: "ak", secretKey: "sk", scope: try! Template("bucket:{filename}"),
                            ttlSeconds: 3600,
                            extra: [])))),
        Injection(name: "key", position: .before("upload"), value: .template(try! Template("{filename}"))),
    ]
    rules.digests = [.sha256]
    return rules
}

func memmemScan(_ body: [UInt8], chunkSize: Int) -> Int {
    let needle = Array("\r\n--".utf8) + boundary
    var found = 0
    body.withUnsafeBytes { all in
        needle.withUnsafeBytes { needle in
            var start = 0
            while start < all.count {
                let end = min(all.count, start + chunkSize)
                var position = all.baseAddress! + start
                let limit = all.baseAddress! + end
                while let hit = fg_memmem(position, limit - position, needle.baseAddress!, needle.count) {
                    found += 1
                    position = hit + needle.count
                }
                start = end
            }
        }
    }
    return found
}

/// The counter file of scripts/profile/alloccount.c, when the process runs under it.
let allocationCounter: Int32? = {
    guard let path = getenv("ALLOCCOUNT_FILE"), getenv("LD_PRELOAD") != nil else { return nil }
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    return descriptor < 0 ? nil : descriptor
}()

/// Heap allocations so far (the counter's first word), or nil without the counter.
func allocations() -> UInt64? {
    guard let allocationCounter else { return nil }
    var value: UInt64 = 0
    guard pread(allocationCounter, &value, 8, 0) == 8 else { return nil }
    return UInt64(littleEndian: value)
}

/// Allocations per part of one run of `body` (after a warm-up run), or nil without the counter.
func allocationsPerPart(parts: Int, _ body: () -> Void) -> Double? {
    body()
    guard let before = allocations() else { return nil }
    body()
    guard let after = allocations() else { return nil }
    return Double(after - before) / Double(parts)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

/// One line of the report: MB/s of the case and of its reference, allocations per part.
struct Row {
    var name: String
    var parse: Double
    var reference: Double
    var referenceName = "memmem"
    var allocationsPerPart: Double?
}

/// SHA-256 alone over the same bytes in the same chunks (OpenSSL's EVP, as the digests rule).
func sha256Only(_ body: [UInt8], chunkSize: Int) -> Int {
    let context = EVP_MD_CTX_new()
    EVP_DigestInit_ex(context, EVP_sha256(), nil)
    body.withUnsafeBytes { all in
        var start = 0
        while start < all.count {
            let end = min(all.count, start + chunkSize)
            EVP_DigestUpdate(context, all.baseAddress! + start, end - start)
            start = end
        }
    }
    var digest = [UInt8](repeating: 0, count: 64)
    var length: UInt32 = 0
    EVP_DigestFinal_ex(context, &digest, &length)
    EVP_MD_CTX_free(context)
    return Int(digest[0])
}

var rows: [Row] = []
var observed = 0
for (key, make, parts) in [("a", largeFile, 1), ("b", smallFields, 10_000), ("c", denseContent, 1)]
where only == nil || only == key {
    let testCase = make()
    let megabytes = Double(testCase.body.count) / 1e6
    var parse: [Double] = []
    var scan: [Double] = []
    var sink = 0
    for _ in 0..<repeats {
        parse.append(seconds { sink &+= parseAndEncode(testCase.body, chunkSize: chunkSize) })
        scan.append(seconds { sink &+= memmemScan(testCase.body, chunkSize: chunkSize) })
    }
    let counted = allocationsPerPart(parts: parts) {
        sink &+= parseAndEncode(testCase.body, chunkSize: chunkSize)
    }
    rows.append(
        Row(
            name: testCase.name, parse: megabytes / median(parse), reference: megabytes / median(scan),
            allocationsPerPart: counted))
    if key == "a" {
        let rules = benchmarkRules()
        let sniffer = Sniffer()
        var ruled: [Double] = []
        var hashed: [Double] = []
        let hashing = HashingThread()
        let run = {
            parseWithRules(
                testCase.body, chunkSize: chunkSize, rules: rules, sniffer: sniffer, hashing: hashing)
        }
        for _ in 0..<repeats {
            ruled.append(seconds { sink &+= run() })
            hashed.append(seconds { sink &+= sha256Only(testCase.body, chunkSize: chunkSize) })
        }
        rows.append(
            Row(
                name: "(d) (a) with sniff + rename + inject + sha256", parse: megabytes / median(ruled),
                reference: megabytes / median(hashed), referenceName: "SHA-256 alone",
                allocationsPerPart: allocationsPerPart(parts: 1) { sink &+= run() }))
    }
    if sink == 42 { print("") }  // keep the work observable
}

if only == nil || only == "e" {
    let mixed = mixedParts()
    let rules = perPartRules()
    let sniffer = Sniffer()
    let run = {
        parseWithRules(mixed.body, chunkSize: chunkSize, rules: rules, sniffer: sniffer, hashing: nil)
    }
    var ruled: [Double] = []
    var scanned: [Double] = []
    for _ in 0..<repeats {
        ruled.append(seconds { observed &+= run() })
        scanned.append(seconds { observed &+= memmemScan(mixed.body, chunkSize: chunkSize) })
    }
    let megabytes = Double(mixed.body.count) / 1e6
    rows.append(
        Row(
            name: mixed.name, parse: megabytes / median(ruled), reference: megabytes / median(scanned),
            allocationsPerPart: allocationsPerPart(parts: 10_000) { observed &+= run() }))
}
if observed == 42 { print("") }  // keep the work observable

func allocationText(_ row: Row) -> String {
    row.allocationsPerPart.map { format2($0) } ?? "n/a"
}

if markdown {
    print("| case | parse + re-encode MB/s | reference | reference MB/s | ratio | allocations per part |")
    print("|---|---:|---|---:|---:|---:|")
    for row in rows {
        print(
            "| \(row.name) | \(Int(row.parse.rounded())) | \(row.referenceName) | \(Int(row.reference.rounded())) | \(format2(row.parse / row.reference))× | \(allocationText(row)) |"
        )
    }
} else {
    for row in rows {
        print(
            "\(row.name): parse+encode \(Int(row.parse.rounded())) MB/s, \(row.referenceName) \(Int(row.reference.rounded())) MB/s, ratio \(format2(row.parse / row.reference)), allocations per part \(allocationText(row))"
        )
    }
}

func format2(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
}
