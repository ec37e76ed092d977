import HTTPCore
import MultipartParsing

/// Parses the input whole and split at two points taken from its first bytes; every feeding
/// must give the same events (content concatenated) and the same verdict.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMultipart(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 4 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let body = Array(bytes[4...])
    let a = Int(bytes[0]) << 8 | Int(bytes[1])
    let b = Int(bytes[2]) << 8 | Int(bytes[3])
    let cuts = body.isEmpty ? [] : [a % (body.count + 1), b % (body.count + 1)].sorted()
    let whole = run(body, cuts: [])
    let split = run(body, cuts: cuts)
    precondition(whole == split, "split at \(cuts) differs:\n\(whole)\n\(split)")
    return 0
}

struct Outcome: Equatable {
    var events: [String] = []
    var error: String?
}

struct Recorder: MultipartEventHandler {
    var outcome = Outcome()
    var content: [UInt8] = []
    mutating func handle(_ event: MultipartEvent) {
        switch event {
        case .partBegin(let head):
            outcome.events.append("begin \(head.nameString) \(head.filenameString ?? "-")")
        case .body(let bytes): content += bytes
        case .partEnd:
            outcome.events.append("content \(content)")
            content = []
        case .end: outcome.events.append("end")
        }
    }
}

func run(_ body: [UInt8], cuts: [Int]) -> Outcome {
    var recorder = Recorder()
    do throws(MultipartError) {
        var parser = try MultipartParser(
            boundary: "b0undary", limits: MultipartLimits(parts: 50, partHeaderBytes: 512))
        var start = 0
        for cut in cuts + [body.count] where cut >= start {
            try parser.feed(Array(body[start..<cut]), into: &recorder)
            start = cut
        }
        try parser.finish(into: &recorder)
        recorder.outcome.events.append("anomalies \(parser.anomalies)")
    } catch {
        // Content delivered before an error depends on the splits; the error does not.
        recorder.outcome.events = recorder.outcome.events.filter { $0.hasPrefix("begin") }
        recorder.outcome.error = "\(error)"
    }
    return recorder.outcome
}
