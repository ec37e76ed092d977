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
    enum Event: Equatable {
        case begin(name: [UInt8], filename: [UInt8]?)
        case content([UInt8])
        case end
        case anomalies(UInt32)
    }

    var events: [Event] = []
    var error: MultipartError?
}

struct Recorder: MultipartEventHandler {
    var outcome = Outcome()
    var content: [UInt8] = []
    mutating func handle(_ event: MultipartEvent) {
        switch event {
        case .partBegin(let head): outcome.events.append(.begin(name: head.name, filename: head.filename))
        case .body(let bytes): content += bytes
        case .partEnd:
            outcome.events.append(.content(content))
            content = []
        case .end: outcome.events.append(.end)
        }
    }
}

func run(_ body: [UInt8], cuts: [Int]) -> Outcome {
    var recorder = Recorder()
    do throws(MultipartError) {
        var parser = try MultipartParser(
            boundary: "b0undary", limits: MultipartLimits(parts: 50, partHeaderBytes: 512))
        var start = 0
        var failure: MultipartError?
        body.withUnsafeBytes { all in
            for cut in cuts + [body.count] where cut >= start && failure == nil {
                do throws(MultipartError) {
                    try parser.feed(UnsafeRawBufferPointer(rebasing: all[start..<cut]), into: &recorder)
                } catch {
                    failure = error
                }
                start = cut
            }
        }
        if let failure { throw failure }
        try parser.finish(into: &recorder)
        recorder.outcome.events.append(.anomalies(parser.anomalies.rawValue))
    } catch {
        // Content delivered before an error depends on the splits; the error does not.
        recorder.outcome.events = recorder.outcome.events.filter {
            if case .begin = $0 { return true }
            return false
        }
        recorder.outcome.error = error
    }
    return recorder.outcome
}
